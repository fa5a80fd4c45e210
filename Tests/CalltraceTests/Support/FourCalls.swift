/// The synthetic thread the export and view tests share: four calls, in exit order,
///   0x1000 [0, 100 ms) > { 0x2000 [10, 40 ms) > 0x3000 [15, 25 ms); 0x2000 [50, 90 ms) }
/// `extra` adds more children of 0x1000 (depth 1, after the two 0x2000 calls; `start` and
/// `duration` in nanoseconds). The payload of one block of CALL records.
enum FourCalls {
    static let ms: UInt64 = 1_000_000

    static func payload(extra: [(function: UInt64, start: UInt64, duration: UInt64)] = []) -> [UInt8] {
        var calls = SyntheticTrace.Calls()
        var records = [
            calls.call(function: 0x3000, start: 15 * ms, duration: 10 * ms, depth: 2),
            calls.call(function: 0x2000, start: 10 * ms, duration: 30 * ms, depth: 1),
            calls.call(function: 0x2000, start: 50 * ms, duration: 40 * ms, depth: 1),
        ]
        for call in extra {
            records.append(calls.call(function: call.function, start: call.start, duration: call.duration, depth: 1))
        }
        records.append(calls.call(function: 0x1000, start: 0, duration: 100 * ms, depth: 0))
        return records.flatMap { $0 }
    }
}
