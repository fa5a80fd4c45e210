/// The hangs of a profile by the call they happened in (same thread, function and start), for the
/// report views: the lines `hangs` prints for each.
struct HungCalls {
    private var byStart: [Int64: [ProfileHang]] = [:]
    private let profile: Profile

    init(profile: Profile, thread: ProfileThread) {
        self.profile = profile
        for hang in profile.hangs where hang.tid == thread.tid {
            byStart[hang.callStart.sinceStart.value, default: []].append(hang)
        }
    }

    var isEmpty: Bool { byStart.isEmpty }

    /// The hangs in `call`, each as its text lines.
    subscript(thread: ProfileThread, call: Int) -> [[String]] {
        hangs(thread, call).map { HangsTextView.lines(of: $0, profile: profile) }
    }

    func hangs(_ thread: ProfileThread, _ call: Int) -> [ProfileHang] {
        guard let hangs = byStart[thread.start(call).sinceStart.value] else { return [] }
        return hangs.filter { $0.function == Int(thread.function[call]) && $0.depth == thread.depth(call) }
    }
}
