/// A PT_LOAD segment: the part of the file mapped at `vaddr ..< vaddr + memorySize`
/// (ELF virtual addresses; add the module's load bias for run-time addresses).
struct ElfSegment: Equatable {
    var vaddr: UInt64
    var memorySize: UInt64
    var fileOffset: UInt64
    var isExecutable: Bool

    func contains(_ vaddr: UInt64) -> Bool {
        vaddr >= self.vaddr && vaddr - self.vaddr < memorySize
    }
}
