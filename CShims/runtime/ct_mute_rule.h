// The muting rule's numbers, shared by muting a whole function (ct_mute.c) and muting inside a
// recursion, which counts the same way by level (ct_mute_levels.c): calls before a function may be
// muted, at most one near call in this many, and the timed calls beneath a near call that keep its
// function timed for good (its time came from work, not from a moment off the CPU).
#ifndef CT_MUTE_RULE_H
#define CT_MUTE_RULE_H

#define CT_MUTE_MIN_CALLS 2000u
#define CT_MUTE_NEAR_RATIO 10000u
#define CT_MUTE_WORK_CALLS 64u

#endif
