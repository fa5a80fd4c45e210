import CalltraceKit
import FuzzSupport

/// The file each input is written to: the ELF reader opens images by path, as `report` does.
let scratch = ScratchFile(name: "image")

/// One fuzz input, read as a module's ELF file the way `calltrace report` reads one: headers,
/// build-id, segments, debug link, function symbols, demangled names, DWARF lines. Whatever the
/// bytes, the reader must throw an `ElfImageError` or name what it can: never trap or crash.
/// (Scripts/fuzz, docs/fuzzing.md)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    scratch.write(UnsafeRawBufferPointer(start: data, count: size))
    ElfReaderProbe.probe(path: scratch.path, debugRoot: scratch.directory + "/debug")
    return 0
}

FuzzDriver.main(fuzzTestOneInput)
