// calltrace's GCC plugin: XRay-style sleds for gcc (docs/design.md, "Sleds").
//
// gcc's -finstrument-functions instruments every function and every inlined copy of one with calls
// the code must be built around (registers kept across them, the hooks' arguments loaded), so a
// muted function still pays for them. This pass instead leaves, in each function that gcc really
// emits (after inlining: an inlined copy gets none), the sleds clang's -fxray-instrument leaves, in
// the same table (`xray_instr_map`, version 2), so one runtime patches both:
//   - at the function's entry, before its prologue: `jmp +9` over nine bytes (a 2-byte jump and a
//     9-byte no-op);
//   - at each return, after the epilogue: the `ret` itself, followed by ten bytes never run (the
//     runtime patches the eleven into a jump over the id, `call stub` and the `ret`);
//   - before each sibling call (a tail call, after the epilogue): a jump over nine bytes, as at entry.
// Nothing is clobbered and nothing moves: the sleds are volatile asm inserted after register
// allocation, prologue and epilogue, where every register the function uses is already saved or
// restored, so an unpatched sled costs a jump at entry and nothing at exit, and a patched one
// whatever the runtime's stubs do (they save everything they touch).
//
// Left without sleds: functions marked no_instrument_function or naked, and those that call
// __builtin_eh_return (the unwinder's own). With -mfunction-return other than keep the return
// goes through a thunk gcc emits, so the exit sled is a jump over ten bytes before it instead.
//
// Sibling calls: a second pass, just before expansion, makes a call in tail position an ordinary
// call again (unless the source demands a tail call), so that a function that ends by calling a
// function without sleds (`return poll(...)`) is still open while that one runs, as with
// -finstrument-functions, whose exit hook kept tail calls from being made at all. Tail-recursion
// elimination has already turned self-calls into loops by then, so unlike -fno-optimize-sibling-
// calls this keeps those loops (and the stack depth the untraced program has). An explicit
// -foptimize-sibling-calls keeps every tail call; the runtime then follows them (docs/design.md,
// "Tail calls").
//
// Argument: -fplugin-arg-calltrace_sleds-exclude=FILE, one function name per line ('#' starts a
// comment), matched as -finstrument-functions-exclude-function-list matches (a function is left
// out when its printable name contains one of them), so `calltrace exclude-list` serves both.
#include "gcc-plugin.h"
#include "plugin-version.h"
#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "memmodel.h"
#include "tm.h"
#include "rtl.h"
#include "emit-rtl.h"
#include "basic-block.h"
#include "cfghooks.h"
#include "stringpool.h"
#include "attribs.h"
#include "langhooks.h"
#include "diagnostic-core.h"
#include "target.h"
#include "options.h"
#include "gimple.h"
#include "gimple-iterator.h"

#include <fstream>
#include <map>
#include <string>
#include <vector>

int plugin_is_GPL_compatible;

namespace {

std::vector<std::string> excluded;

// Where each function's body opens, as its front end saw it: a copy of a function that gcc makes
// later (`f.constprop.0`, `f.isra.0`, `f.part.0`) starts at its declaration's line instead, so it
// takes its original's (by DECL_ABSTRACT_ORIGIN, which a copy names).
std::map<unsigned, location_t> body_opens;

void note_body_opens(void *gcc_data, void *) {
    tree decl = static_cast<tree>(gcc_data);
    if (decl && TREE_CODE(decl) == FUNCTION_DECL && DECL_STRUCT_FUNCTION(decl))
        body_opens[DECL_UID(decl)] = DECL_STRUCT_FUNCTION(decl)->function_start_locus;
}

location_t entry_location(function *fun) {
    for (tree decl = fun->decl; decl; decl = DECL_ABSTRACT_ORIGIN(decl) == decl ? NULL_TREE : DECL_ABSTRACT_ORIGIN(decl)) {
        auto known = body_opens.find(DECL_UID(decl));
        if (known != body_opens.end()) return known->second;
    }
    return fun->function_start_locus;
}

// Sled bytes, as clang emits them: a version-2 sled's no-op carries 0x200 in its displacement.
const char *const JUMP_SLED = "0xeb, 0x09, 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x02, 0x00, 0x00";
const char *const RET_SLED = "0xc3, 0x2e, 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x02, 0x00, 0x00";

enum Kind { ENTRY = 0, EXIT = 1, TAIL = 2 };

// The label of a function's first byte, a local one (below): the table names the function by it,
// since a reference to the global name would take a dynamic relocation in a shared library (the
// name may be interposed), which the loader does not do for these.
std::string start_label(int funcdef_no) {
    return ".Lcalltrace_fn" + std::to_string(funcdef_no);
}

// The sled and its table entry. The entry goes into a section linked to the function's (so that
// --gc-sections drops the two together, as clang's do); local label 1 is fine to repeat, since a
// later pass may copy a return block, sled and all. The sled is 2-byte aligned: the runtime
// patches its first two bytes with one atomic store, which must not straddle a cache line.
std::string sled(Kind kind, const char *bytes, const char *fn, int funcdef_no) {
    std::string s = "\t.p2align 1\n1:\t.byte ";
    s += bytes;
    s += "\n\t.pushsection xray_instr_map,\"ao\",@progbits,";
    s += fn;
    s += "\n\t.quad 1b - .\n\t.quad ";
    s += start_label(funcdef_no);
    s += " - .\n\t.byte ";
    s += std::to_string(kind);
    s += ", 0, 2\n\t.zero 13\n\t.popsection";
    return s;
}

// An asm insn holding a sled, at `where` in the line table: for an entry the line where the
// function's body opens (`{`, or `){`), as the instrumented code of -finstrument-functions had, so
// that a function's first address is on that line; the return's for an exit. final prints an
// asm's location as a comment and reads its file name without a check: an insn with no location
// (a return gcc made itself) gets the function's.
rtx asm_insn(const std::string &text, location_t *where) {
    if (*where == UNKNOWN_LOCATION || !expand_location(*where).file) *where = DECL_SOURCE_LOCATION(current_function_decl);
    if (*where == UNKNOWN_LOCATION || !expand_location(*where).file) *where = BUILTINS_LOCATION;
    rtx body = gen_rtx_ASM_INPUT_loc(VOIDmode, ggc_strdup(text.c_str()), *where);
    MEM_VOLATILE_P(body) = 1;
    return body;
}

void emit_before(rtx_insn *insn, const std::string &text, location_t where) {
    rtx body = asm_insn(text, &where);
    emit_insn_before_setloc(body, insn, where);
}

void emit_after(rtx_insn *insn, const std::string &text, location_t where) {
    rtx body = asm_insn(text, &where);
    emit_insn_after_setloc(body, insn, where);
}

bool is_excluded(tree decl) {
    if (excluded.empty()) return false;
    const char *name = lang_hooks.decl_printable_name(decl, 1);
    if (!name) return false;
    for (const std::string &e : excluded)
        if (strstr(name, e.c_str())) return true;
    return false;
}

const pass_data sleds_pass_data = {
    RTL_PASS, "calltrace_sleds", OPTGROUP_NONE, TV_NONE, PROP_rtl, 0, 0, 0, 0,
};

struct sleds_pass : rtl_opt_pass {
    explicit sleds_pass(gcc::context *ctx) : rtl_opt_pass(sleds_pass_data, ctx) {}

    unsigned int execute(function *fun) override {
        tree decl = fun->decl;
        if (lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(decl)) ||
            lookup_attribute("naked", DECL_ATTRIBUTES(decl)) || crtl->calls_eh_return || is_excluded(decl))
            return 0;
        const char *fn = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(decl));
        if (fn[0] == '*') fn++;
        edge entry = single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fun));
        if (!entry) return 0;
        bool ret_sled = fun->machine->function_return_type == indirect_branch_keep;
        for (rtx_insn *insn = get_insns(); insn; insn = NEXT_INSN(insn)) {
            if (JUMP_P(insn) && returnjump_p(insn)) emit_before(insn, sled(EXIT, ret_sled ? RET_SLED : JUMP_SLED, fn, fun->funcdef_no),
                                                                  INSN_LOCATION(insn));
            else if (CALL_P(insn) && SIBLING_CALL_P(insn)) emit_before(insn, sled(TAIL, JUMP_SLED, fn, fun->funcdef_no), INSN_LOCATION(insn));
        }
        // The entry sled in a block of its own before the first one: the first block may be a
        // loop's head, whose back edge must not run it again (`for (;;) step();` jumps back to
        // the function's first instruction); the function is entered through this one only.
        basic_block first = split_edge(entry);
        location_t opens = entry_location(fun);
        emit_after(BB_END(first), sled(ENTRY, JUMP_SLED, fn, fun->funcdef_no), opens);
        // The line the function's first address is on (final prints it before the first insn).
        if (opens != UNKNOWN_LOCATION) prologue_location = fun->function_start_locus = opens;
        return 0;
    }
};

const pass_data calls_pass_data = {
    GIMPLE_PASS, "calltrace_calls", OPTGROUP_NONE, TV_NONE, PROP_cfg, 0, 0, 0, 0,
};

struct calls_pass : gimple_opt_pass {
    explicit calls_pass(gcc::context *ctx) : gimple_opt_pass(calls_pass_data, ctx) {}

    bool gate(function *) override { return flag_optimize_sibling_calls && !global_options_set.x_flag_optimize_sibling_calls; }

    unsigned int execute(function *fun) override {
        basic_block bb;
        FOR_EACH_BB_FN(bb, fun) {
            for (gimple_stmt_iterator i = gsi_start_bb(bb); !gsi_end_p(i); gsi_next(&i)) {
                gcall *call = dyn_cast<gcall *>(gsi_stmt(i));
                if (call && gimple_call_tail_p(call) && !gimple_call_must_tail_p(call)) gimple_call_set_tail(call, false);
            }
        }
        return 0;
    }
};

// The start label of every function, printed right after its own label (the target's prologue
// hook runs there, before the first instruction, an endbr64 included), then whatever the target
// printed there before.
void (*target_prologue)(FILE *);

void print_start_label(FILE *file) {
    fprintf(file, "%s:\n", start_label(cfun->funcdef_no).c_str());
    if (target_prologue) target_prologue(file);
}

void read_exclusions(const char *path) {
    std::ifstream in(path);
    if (!in) {
        error("calltrace_sleds: cannot read the exclusion list %s", path);
        return;
    }
    std::string line;
    while (std::getline(in, line)) {
        size_t hash = line.find('#');
        if (hash != std::string::npos) line.erase(hash);
        size_t b = line.find_first_not_of(" \t\r");
        size_t e = line.find_last_not_of(" \t\r");
        if (b != std::string::npos) excluded.push_back(line.substr(b, e - b + 1));
    }
}

// Registers `pass` right after the first instance of the pass named `after`.
void insert_after(const char *plugin, opt_pass *pass, const char *after) {
    struct register_pass_info where;
    where.pass = pass;
    where.reference_pass_name = after;
    where.ref_pass_instance_number = 1;
    where.pos_op = PASS_POS_INSERT_AFTER;
    register_callback(plugin, PLUGIN_PASS_MANAGER_SETUP, NULL, &where);
}

}  // namespace

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version) {
    if (!plugin_default_version_check(version, &gcc_version)) {
        error("calltrace_sleds: built for gcc %s, loaded by another version (the wrapper builds one per gcc)",
              gcc_version.basever);
        return 1;
    }
    for (int i = 0; i < info->argc; i++) {
        if (strcmp(info->argv[i].key, "exclude") == 0 && info->argv[i].value) read_exclusions(info->argv[i].value);
        else error("calltrace_sleds: unknown argument %s", info->argv[i].key);
    }
    target_prologue = targetm.asm_out.function_prologue;
    targetm.asm_out.function_prologue = print_start_label;
    // After the prologue and epilogue exist and before anything could move code across them. The
    // later passes treat a volatile asm as a barrier; one that copies a block copies its sled.
    insert_after(info->base_name, new sleds_pass(g), "pro_and_epilogue");
    // Tail calls: just before expansion (gcc's last GIMPLE pass is "optimized").
    insert_after(info->base_name, new calls_pass(g), "optimized");
    register_callback(info->base_name, PLUGIN_FINISH_PARSE_FUNCTION, note_body_opens, NULL);
    static struct plugin_info about = { "1", "calltrace sleds: XRay-style sleds for calltrace's runtime" };
    register_callback(info->base_name, PLUGIN_INFO, NULL, &about);
    return 0;
}
