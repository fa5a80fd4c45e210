/// Opened module images keyed by path and expected build-id, so each file is opened, checked
/// and read once however many trace modules (or reloads at the same path) refer to it.
final class ElfImageCache {
    private struct Key: Hashable {
        var path: [UInt8]
        var buildID: [UInt8]
        var loadedBy: Nanoseconds?
    }

    private var entries: [Key: Result<ModuleImage, ElfImageError>] = [:]
    private let locator: DebugFileLocator

    init(locator: DebugFileLocator = DebugFileLocator()) {
        self.locator = locator
    }

    /// The image for `path` (bytes, as recorded), checked against `buildID` when the trace recorded one; else, when
    /// `loadedBy` (unix time by which the module was loaded) is known, the file must not have been
    /// modified after it. `isNew` is true the first time a key is looked up, so callers warn once
    /// per failure.
    func image(path: [UInt8], buildID: [UInt8], loadedBy: Nanoseconds? = nil)
        -> (result: Result<ModuleImage, ElfImageError>, isNew: Bool) {
        let key = Key(path: path, buildID: buildID, loadedBy: buildID.isEmpty ? loadedBy : nil)
        if let known = entries[key] { return (known, false) }
        let result: Result<ModuleImage, ElfImageError>
        let shownPath = String(decoding: path, as: UTF8.self)
        do {
            let image = try ElfImage(path: path)
            if !buildID.isEmpty && image.buildID != buildID {
                result = .failure(.buildIDMismatch(path: shownPath, expected: buildID, found: image.buildID))
            } else if let loadedBy = key.loadedBy, image.modificationTime > loadedBy {
                result = .failure(.modifiedSinceRecording(path: shownPath))
            } else {
                result = .success(ModuleImage(image: image, locator: locator))
            }
        } catch let error as ElfImageError {
            result = .failure(error)
        } catch {
            result = .failure(.malformed(path: shownPath, reason: "\(error)"))
        }
        entries[key] = result
        return (result, true)
    }
}
