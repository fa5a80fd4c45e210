// calltrace.h from C++ (MarkTests): a mark with extra text from a std::string, three frames from a
// member function. Built by calltrace-c++ it records them; built by a plain c++ it runs as well.
#include <calltrace.h>
#include <cstdio>
#include <string>

struct Loop {
    int frames = 0;
    void run() {
        for (int i = 0; i < 3; i++) {
            calltrace_frame();
            frames++;
        }
    }
};

int main() {
    std::string name = "cpp";
    calltrace_mark_extra(name.c_str(), "from C++");
    Loop loop;
    loop.run();
    std::printf("frames %d\n", loop.frames);
    return 0;
}
