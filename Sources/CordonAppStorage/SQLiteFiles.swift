import Foundation

/// The files of one SQLite database in WAL mode and their modes: shared by the per-app storage
/// (`AppStorage`) and the agent's database (CordonStore's `CordonDatabase`), both kept the user's
/// alone (0600, docs/ARCHITECTURE.md "Storage").
package enum SQLiteFiles {
    /// The database file, its WAL and its shared-memory file.
    package static func files(of path: String) -> [String] {
        [path, path + "-wal", path + "-shm"]
    }

    /// Sets each existing file in `paths` to mode 0600; returns what it changed, as
    /// `PATH: 0644 -> 0600`.
    package static func makePrivate(_ paths: [String]) -> [String] {
        paths.compactMap { file in
            var info = stat()
            guard stat(file, &info) == 0, info.st_mode & 0o7777 != 0o600, chmod(file, 0o600) == 0 else { return nil }
            return "\(file): " + String(format: "%04o", info.st_mode & 0o7777) + " -> 0600"
        }
    }
}
