@testable import CalltraceKit
import Foundation
import XCTest

/// The reader's format constants (`TraceFormat`) are the runtime's (`CShims/runtime/ct_format.h`):
/// this test reads the C header as text (defines, enum values, the structs' fields with their C
/// types, the `_Static_assert` sizes) and fails when either side changes alone.
final class FormatConstantsTests: XCTestCase {
    private static let headerPath = "CShims/runtime/ct_format.h"

    private func formatHeader() throws -> String {
        try String(contentsOf: Workspace.packageRoot.appendingPathComponent(Self.headerPath), encoding: .utf8)
    }

    func testDefinesMatch() throws {
        let defines = CHeaderText(try formatHeader()).defines
        XCTAssertEqual(defines["CT_MAGIC"].map { Array($0.trimmingCharacters(in: ["\""]).utf8) + [0] }, TraceFormat.magic)
        XCTAssertEqual(defines["CT_HEADER_SIZE"].flatMap(CHeaderText.value), UInt64(TraceFormat.headerSize))
        XCTAssertEqual(defines["CT_BLOCK_HEADER_SIZE"].flatMap(CHeaderText.value), UInt64(TraceFormat.blockHeaderSize))
        XCTAssertEqual(defines["CT_HANG_MAX_PCS"].flatMap(CHeaderText.value), UInt64(TraceFormat.hangMaxPCs))
        let api = try String(contentsOf: Workspace.packageRoot.appendingPathComponent("CShims/runtime/include/calltrace_runtime.h"),
                             encoding: .utf8)
        XCTAssertEqual(CHeaderText(api).defines["CALLTRACE_FORMAT_VERSION"].flatMap(CHeaderText.value),
                       UInt64(TraceFormat.version))
    }

    /// Every CT_FILE_, CT_BLOCK_, CT_REC_, CT_CALL_ and CT_LOST_ constant, both ways: a constant
    /// the C side adds must be added here too.
    func testEnumValuesMatch() throws {
        let expected: [String: UInt64] = [
            "CT_FILE_CLOSED": UInt64(TraceFormat.FileFlag.closed),
            "CT_FILE_TSC": UInt64(TraceFormat.FileFlag.tsc),
            "CT_FILE_CRASHED": UInt64(TraceFormat.FileFlag.crashed),
            "CT_BLOCK_SEALED": UInt64(TraceFormat.BlockFlag.sealed),
            "CT_REC_CALL": UInt64(TraceFormat.Tag.call),
            "CT_REC_CALL_UNTIMED": UInt64(TraceFormat.Tag.callUntimed),
            "CT_REC_MODULE": UInt64(TraceFormat.Tag.module),
            "CT_REC_MODULE_GONE": UInt64(TraceFormat.Tag.moduleGone),
            "CT_REC_PROCESS": UInt64(TraceFormat.Tag.process),
            "CT_REC_THREAD": UInt64(TraceFormat.Tag.thread),
            "CT_REC_SEGMENT": UInt64(TraceFormat.Tag.segment),
            "CT_REC_MUTED": UInt64(TraceFormat.Tag.muted),
            "CT_REC_RUN_DELAY": UInt64(TraceFormat.Tag.runDelay),
            "CT_REC_THREAD_STATE": UInt64(TraceFormat.Tag.threadState),
            "CT_REC_MARK": UInt64(TraceFormat.Tag.mark),
            "CT_REC_FRAME": UInt64(TraceFormat.Tag.frame),
            "CT_SCHED_SAMPLED": UInt64(TraceFormat.SchedFlag.sampled),
            "CT_SCHED_UNAVAILABLE": UInt64(TraceFormat.SchedFlag.unavailable),
            "CT_SCHED_PARTIAL": UInt64(TraceFormat.SchedFlag.partial),
            "CT_SCHED_STATE_UNREADABLE": UInt64(TraceFormat.SchedFlag.stateUnreadable),
            "CT_STATE_RUNNING": TraceFormat.ThreadState.running,
            "CT_STATE_BLOCKED_SYSCALL": TraceFormat.ThreadState.syscall,
            "CT_STATE_BLOCKED_OTHER": TraceFormat.ThreadState.kernel,
            "CT_STATE_UNKNOWN": TraceFormat.ThreadState.unknown,
            "CT_REC_HANG": UInt64(TraceFormat.Tag.hang),
            "CT_REC_FILTER": UInt64(TraceFormat.Tag.filter),
            "CT_REC_SPAN_BEGIN": UInt64(TraceFormat.Tag.spanBegin),
            "CT_REC_SPAN_POINT": UInt64(TraceFormat.Tag.spanPoint),
            "CT_REC_SPAN_END": UInt64(TraceFormat.Tag.spanEnd),
            "CT_REC_MARK_AT": UInt64(TraceFormat.Tag.markAt),
            "CT_REC_RESTRICTED": UInt64(TraceFormat.Tag.restricted),
            "CT_RESTRICT_STRICT": TraceFormat.Restriction.strict,
            "CT_RESTRICT_FILTER": TraceFormat.Restriction.filter,
            "CT_RESTRICT_FILTER_ALL": TraceFormat.Restriction.filterAll,
            "CT_RESTRICT_TSC": TraceFormat.Restriction.tsc,
            "CT_RESTRICT_TIMED_ON": TraceFormat.Restriction.timedOn,
            "CT_RESTRICT_CLOCK_CALL": TraceFormat.Restriction.clockCall,
            "CT_RESTRICT_STOPPED": TraceFormat.Restriction.stopped,
            "CT_RESTRICT_STOPPED_ALL": TraceFormat.Restriction.stoppedAll,
            "CT_HANG_UNAVAILABLE": UInt64(TraceFormat.HangFlag.unavailable),
            "CT_HANG_SIGNAL_OWNED": UInt64(TraceFormat.HangFlag.signalOwned),
            "CT_HANG_DROPPED": UInt64(TraceFormat.HangFlag.dropped),
            "CT_HANG_PARTIAL": UInt64(TraceFormat.HangFlag.partial),
            "CT_HANG_REC_PARTIAL": UInt64(TraceFormat.HangRecordFlag.partial),
            "CT_HANG_REC_RESUMED": UInt64(TraceFormat.HangRecordFlag.resumed),
            "CT_CALL_UNFINISHED": UInt64(TraceFormat.CallFlag.unfinished),
            "CT_CALL_UNWOUND": UInt64(TraceFormat.CallFlag.unwound),
            "CT_CALL_DESCENDANTS": UInt64(TraceFormat.CallFlag.descendants),
            "CT_LOST_RING_EMPTY": UInt64(TraceFormat.Lost.ringEmpty),
            "CT_LOST_NO_SPACE": UInt64(TraceFormat.Lost.noSpace),
            "CT_LOST_FILE_LIMIT": UInt64(TraceFormat.Lost.fileLimit),
            "CT_LOST_MAP_FAILED": UInt64(TraceFormat.Lost.mapFailed),
            "CT_LOST_NO_DRAIN": UInt64(TraceFormat.Lost.noDrain),
            "CT_LOST_MAIN_AT_EXIT": UInt64(TraceFormat.Lost.mainAtExit),
            "CT_LOST_ARGS_CUT": UInt64(TraceFormat.Lost.argsCut),
            "CT_LOST_MARKS": UInt64(TraceFormat.Lost.marks),
            "CT_LOST_MUTING": UInt64(TraceFormat.Lost.muting),
            "CT_LOST_EVENTS_KEPT": UInt64(TraceFormat.Lost.eventsKept),
            "CT_LOST_EARLY": UInt64(TraceFormat.Lost.early),
            "CT_LOST_METADATA": UInt64(TraceFormat.Lost.metadata),
            "CT_INSTRUMENT_HOOKS": UInt64(TraceFormat.Instrument.hooks),
            "CT_INSTRUMENT_SLEDS": UInt64(TraceFormat.Instrument.sleds),
        ]
        let found = CHeaderText(try formatHeader()).enumValues
            .filter { name, _ in ["CT_FILE_", "CT_BLOCK_", "CT_REC_", "CT_CALL_", "CT_LOST_", "CT_SCHED_", "CT_STATE_", "CT_HANG_", "CT_INSTRUMENT_", "CT_RESTRICT_"].contains { name.hasPrefix($0) } }
        XCTAssertEqual(found, expected)
        let lostBits = expected.filter { $0.key.hasPrefix("CT_LOST_") }.values.reduce(0, |)
        XCTAssertEqual(lostBits, UInt64(TraceFormat.Lost.known), "TraceFormat.Lost.known is every bit the runtime sets")
        XCTAssertEqual(UInt64(TraceFormat.CallFlag.mask) & (UInt64(TraceFormat.CallFlag.unfinished) | UInt64(TraceFormat.CallFlag.unwound)),
                       UInt64(TraceFormat.CallFlag.unfinished) | UInt64(TraceFormat.CallFlag.unwound))
    }

    func testFileHeaderLayoutMatches() throws {
        typealias At = TraceFormat.HeaderOffset
        let expected: [String: Int] = [
            "magic": At.magic, "version": At.version, "reserved": At.reserved, "header_size": At.headerSize,
            "block_size": At.blockSize, "flags": At.flags, "pid": At.pid, "threshold_ns": At.thresholdNs,
            "threshold_ticks": At.thresholdTicks, "calib_tick0": At.calibTick0, "calib_ns0": At.calibNs0,
            "calib_tick1": At.calibTick1, "calib_ns1": At.calibNs1, "realtime_ns0": At.realtimeNs0,
            "process_start_ns": At.processStartNs, "init_tick": At.initTick, "main_tick": At.mainTick,
            "main_addr": At.mainAddress, "drops": At.drops, "end_tick": At.endTick, "threads_mode": At.threadsMode,
            "max_depth": At.maxDepth, "next_block": At.nextBlock, "signal": At.signal, "nested_drops": At.nestedDrops,
            "lost": At.lost, "lost_errno": At.lostErrno, "overhead_pair_ticks": At.overheadPairTicks,
            "overhead_own_ticks": At.overheadOwnTicks, "mute_mode": At.muteMode, "muted_count": At.mutedCount,
            "sched_period_us": At.schedPeriodUs, "sched_flags": At.schedFlags,
            "frame_interval_ns": At.frameIntervalNs, "hang_threshold_ns": At.hangThresholdNs,
            "hang_count": At.hangCount, "hang_flags": At.hangFlags,
            "symbols_offset": At.symbolsOffset, "symbols_size": At.symbolsSize, "limit": At.limit,
            "overwritten_blocks": At.overwrittenBlocks, "overwritten_calls": At.overwrittenCalls,
            "instrument": At.instrument, "sled_functions": At.sledFunctions, "sleds_unpatched": At.sledsUnpatched,
            "overhead_untimed_ticks": At.overheadUntimedTicks, "muting_drops": At.mutingDrops,
        ]
        let text = CHeaderText(try formatHeader())
        let layout = try XCTUnwrap(text.structLayout("ct_file_header"), "no struct ct_file_header in \(Self.headerPath)")
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: layout.fields.map { ($0.name, $0.offset) }), expected)
        XCTAssertEqual(layout.size, TraceFormat.headerFieldsSize, "the fields' size by C's layout rules")
        XCTAssertEqual(text.staticAssertedSize("ct_file_header"), UInt64(TraceFormat.headerFieldsSize))
        XCTAssertLessThanOrEqual(TraceFormat.headerFieldsSize, TraceFormat.headerSize)
    }

    func testBlockHeaderLayoutMatches() throws {
        typealias At = TraceFormat.BlockOffset
        let expected: [String: Int] = [
            "magic": At.magic, "used": At.used, "stream": At.stream, "flags": At.flags, "tid": At.tid, "seq": At.seq,
        ]
        let text = CHeaderText(try formatHeader())
        let layout = try XCTUnwrap(text.structLayout("ct_block_header"), "no struct ct_block_header in \(Self.headerPath)")
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: layout.fields.map { ($0.name, $0.offset) }), expected)
        XCTAssertEqual(layout.size, TraceFormat.blockHeaderSize)
        XCTAssertEqual(text.staticAssertedSize("ct_block_header"), UInt64(TraceFormat.blockHeaderSize))
        XCTAssertEqual(TraceFormat.blockMagic, Array("CTBK".utf8))
    }

    /// The parser itself, on a header it must get right, so that a parser bug cannot make the
    /// checks above agree with anything.
    func testCHeaderParserComputesCLayout() {
        let text = CHeaderText("""
            #define A_SIZE 12u // twelve
            enum { X_ONE = 1u << 3, X_TWO = 0x85, /* c */ X_THREE = 7, };
            struct s {
                char tag[3];
                _Atomic uint16_t small;   // after one byte of padding
                uint64_t a, b;
                uint32_t tail;
            };
            _Static_assert(sizeof(struct s) == A_SIZE, "size");
            """)
        XCTAssertEqual(text.defines["A_SIZE"].flatMap(CHeaderText.value), 12)
        XCTAssertEqual(text.enumValues, ["X_ONE": 8, "X_TWO": 0x85, "X_THREE": 7])
        let layout = text.structLayout("s")
        XCTAssertEqual(layout?.fields.map(\.name), ["tag", "small", "a", "b", "tail"])
        XCTAssertEqual(layout?.fields.map(\.offset), [0, 4, 8, 16, 24])
        XCTAssertEqual(layout?.size, 32)
        XCTAssertEqual(text.staticAssertedSize("s"), 12)
    }
}

/// Just enough of C to read ct_format.h: `#define`s, enum constants, structs of fixed-size
/// integer and char-array fields laid out by the x86-64 and AArch64 rules (natural alignment).
struct CHeaderText {
    struct Field {
        var name: String
        var offset: Int
    }

    let text: String

    init(_ text: String) {
        // Comments go first, so they cannot hide or fake a declaration.
        var stripped = text.replacingOccurrences(of: #"/\*[\s\S]*?\*/"#, with: " ", options: .regularExpression)
        stripped = stripped.replacingOccurrences(of: #"//[^\n]*"#, with: "", options: .regularExpression)
        self.text = stripped
    }

    var defines: [String: String] {
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard words.count == 3, words[0] == "#define" else { continue }
            result[String(words[1])] = words[2].trimmingCharacters(in: .whitespaces)
        }
        return result
    }

    /// `1u << 3`, `0x85`, `7`, `4096u`.
    static func value(_ expression: String) -> UInt64? {
        let parts = expression.components(separatedBy: "<<").map { $0.trimmingCharacters(in: .whitespaces) }
        func literal(_ text: String) -> UInt64? {
            var digits = Substring(text)
            while let last = digits.last, "uUlL".contains(last) { digits.removeLast() }
            if digits.hasPrefix("0x") || digits.hasPrefix("0X") { return UInt64(digits.dropFirst(2), radix: 16) }
            return UInt64(digits)
        }
        switch parts.count {
        case 1: return literal(parts[0])
        case 2: return literal(parts[0]).flatMap { base in literal(parts[1]).map { base << $0 } }
        default: return nil
        }
    }

    var enumValues: [String: UInt64] {
        var result: [String: UInt64] = [:]
        for body in bodies(after: #"enum\s*\{"#) {
            for item in body.split(separator: ",") {
                let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                guard pair.count == 2, let value = Self.value(pair[1]) else { continue }
                result[pair[0]] = value
            }
        }
        return result
    }

    func structLayout(_ name: String) -> (fields: [Field], size: Int)? {
        guard let body = bodies(after: #"struct\s+\#(name)\s*\{"#).first else { return nil }
        let sizes: [String: Int] = ["char": 1, "uint8_t": 1, "uint16_t": 2, "uint32_t": 4, "uint64_t": 8,
                                    "int32_t": 4, "int64_t": 8]
        var fields: [Field] = []
        var offset = 0
        var alignment = 1
        for declaration in body.split(separator: ";") {
            var words = declaration.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init)
            words.removeAll { $0 == "_Atomic" || $0 == "const" || $0 == "volatile" }
            guard let type = words.first, let size = sizes[type] else { continue }
            for declarator in words.dropFirst().joined(separator: " ").split(separator: ",") {
                var fieldName = declarator.trimmingCharacters(in: .whitespaces)
                var count = 1
                if let open = fieldName.firstIndex(of: "["), let close = fieldName.firstIndex(of: "]"),
                   let length = Int(fieldName[fieldName.index(after: open)..<close]) {
                    count = length
                    fieldName = String(fieldName[..<open])
                }
                offset = (offset + size - 1) / size * size
                fields.append(Field(name: fieldName, offset: offset))
                offset += size * count
                alignment = max(alignment, size)
            }
        }
        return (fields, (offset + alignment - 1) / alignment * alignment)
    }

    /// The size `_Static_assert(sizeof(struct name) == SIZE, ...)` states (a number or a define).
    func staticAssertedSize(_ name: String) -> UInt64? {
        let pattern = #"_Static_assert\s*\(\s*sizeof\s*\(\s*struct\s+\#(name)\s*\)\s*==\s*([A-Za-z0-9_]+)"#
        guard let match = text.range(of: pattern, options: .regularExpression) else { return nil }
        let found = String(text[match])
        guard let operand = found.components(separatedBy: "==").last?.trimmingCharacters(in: .whitespaces) else { return nil }
        return Self.value(operand) ?? defines[operand].flatMap(Self.value)
    }

    /// The text between the braces after each match of `opening` (which ends with the `{`).
    private func bodies(after opening: String) -> [String] {
        var result: [String] = []
        var searchFrom = text.startIndex
        while let match = text.range(of: opening, options: .regularExpression, range: searchFrom..<text.endIndex),
              let close = text[match.upperBound...].firstIndex(of: "}") {
            result.append(String(text[match.upperBound..<close]))
            searchFrom = close
        }
        return result
    }
}
