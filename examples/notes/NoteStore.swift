import Crypto
import Foundation

/// Notes encrypted with the app's key, one AES-GCM sealed box (base64) per line.
/// While closed it holds neither the key nor an open file.
actor NoteStore {
    private let path: String
    private var key: SymmetricKey?
    private var handle: FileHandle?
    private var written = 0

    init(path: String) {
        self.path = path
    }

    var isOpen: Bool { key != nil }

    /// Takes the key, opens the file and returns how many existing notes decrypt with it.
    func open(key: SymmetricKey) throws -> Int {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        let existing = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let readable = existing.filter { line in
            guard let data = Data(base64Encoded: String(line)), let box = try? AES.GCM.SealedBox(combined: data) else {
                return false
            }
            return (try? AES.GCM.open(box, using: key)) != nil
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        self.handle = handle
        self.key = key
        written = existing.count
        return readable.count
    }

    /// Encrypts and appends `note`; returns its number, or nil while closed.
    func append(_ note: String) -> Int? {
        guard let key, let handle, let box = try? AES.GCM.seal(Data(note.utf8), using: key), let combined = box.combined
        else { return nil }
        do {
            try handle.write(contentsOf: Data((combined.base64EncodedString() + "\n").utf8))
            try handle.synchronize()
        } catch {
            return nil
        }
        written += 1
        return written
    }

    /// Closes the file and drops the key.
    func close() {
        try? handle?.close()
        handle = nil
        key = nil
    }
}
