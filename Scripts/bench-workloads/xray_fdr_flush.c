/* Linked into the XRay builds only. XRay's FDR mode, unlike basic mode, is
 * selected by XRAY_OPTIONS="xray_mode=xray-fdr" but neither initialised nor
 * written out by the runtime: the program must call __xray_log_init_mode() and,
 * at the end, finalize and flush the log. This file does both when FDR is the
 * selected mode, so the FDR contender runs and pays for writing its records
 * like every other contender. Its options come from XRAY_FDR_OPTIONS.
 *
 * The declarations are those of <xray/xray_log_interface.h> (a C++ header;
 * the functions are extern "C", the two enums int-sized). */
#include <string.h>

const char *__xray_log_get_current_mode(void);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
int __xray_log_init_mode(const char *mode, const char *config);

__attribute__((constructor(65535), xray_never_instrument)) static void init_fdr_log(void) {
    const char *mode = __xray_log_get_current_mode();
    if (mode && strcmp(mode, "xray-fdr") == 0)
        __xray_log_init_mode("xray-fdr", "");
}

__attribute__((destructor, xray_never_instrument)) static void flush_fdr_log(void) {
    const char *mode = __xray_log_get_current_mode();
    if (mode && strcmp(mode, "xray-fdr") == 0) {
        __xray_log_finalize();
        __xray_log_flushLog();
    }
}
