/// What `report` (a header line) and `info` (under the muted functions) say when gcc built a
/// function the runtime muted with hooks: the code around its skipped hook calls still runs and is
/// in its callers' costs, how far off that was measured to make them, and how to build without it
/// (docs/design.md, "The cost that muting leaves behind"). One text, so that the two say the same.
enum MutedCodeNote {
    /// Nil unless gcc built a function muted with hooks (`Profile.mutedCodeCompiler`).
    static func text(for profile: Profile) -> String? {
        guard profile.mutedCodeCompiler == .gcc else { return nil }
        let one = profile.mutedCount == 1
        let trace = profile.source.isEmpty ? "TRACE" : profile.source
        return "gcc built \(one ? "it" : "them") with hooks: the code around \(one ? "its" : "their") skipped hook calls "
            + "still runs and is in \(one ? "its" : "their") callers' costs, which it can make several times too high "
            + "(\(BuildCompiler.gccHooksMeasured)); rebuild through calltrace-cc with sleds (the default), or leave "
            + "\(one ? "it" : "them") out: calltrace exclude-list \(trace) -o hot.txt, then rebuild with "
            + "CALLTRACE_EXCLUDE=hot.txt (docs/guide.md: a second build)"
    }
}
