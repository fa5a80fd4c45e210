// CALLTRACE_FILTER (`record --filter`): which functions are recorded, chosen without a rebuild.
// A comma-separated list of name globs (fnmatch), C++ names as `report` prints them:
//   -NAME  excluded: muted for good from the start (ct_mute_exclude: the in-hook check, and its own
//          hook calls patched out), so its time is its caller's and its calls cost what a muted
//          function's do;
//   NAME   included: only its calls and the calls made inside them, on their thread, are recorded
//          (the per-thread depth of the outermost open included call, which follows the frames
//          through longjmp and exceptions, in ct_filter_skips, which the hooks reach
//          through ct_mute_skips's gate only while some function is included).
// A pattern that matches no function of the program's instrumented modules warns once and is
// ignored, unless a library loaded later (dlopen) matches it: those are matched on the drain
// thread's pass after their load. ct_filter.c says how names are matched and why at trace open.
#ifndef CT_FILTER_H
#define CT_FILTER_H

#include "ct_feature.h"

// The feature (ct_feature.h).
//   open (the process's first trace): patterns to addresses, exclusions applied, inclusion gate on;
//   pass: libraries loaded since (dlopen) matched as at open; the FILTER record, once in each
//         trace (a fork child's too).
extern const struct ct_feature ct_filter_feature;

// Included functions: is this call outside every one on its thread? Compares the thread's depth
// with its outermost open included call's; asks muting's in-hook check first (the hooks' gate,
// ct_skip.h, comes here only while some function is included).
bool ct_filter_skips(uintptr_t fn, bool exit, uintptr_t caller_sp, uintptr_t site);
// The enter hook of `fn` closed frames a jump skipped (or counted calls beyond capacity) and pushes
// it at depth `live` + 1: true when that ended the thread's included call and `fn` is outside every
// one (not to be pushed). Called only while CT_SKIP_INCLUDED is on, out of line.
bool ct_filter_settled(uintptr_t fn, uint64_t live);

#endif
