#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
