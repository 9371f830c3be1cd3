import CordonLocking
import CordonSystem
import Foundation
import Testing

/// Counts callbacks from the watcher's thread.
final class CallbackCounter: Sendable {
    private let count = Locked(0)

    var value: Int { count.withLock { $0 } }

    func increment() { count.withLock { $0 += 1 } }

    /// Waits (polling every 10 ms, for at most `timeout` seconds) until the count exceeds
    /// `previous`; returns whether it did.
    func waitForMoreThan(_ previous: Int, timeout: Duration = .seconds(10)) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if value > previous { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return value > previous
    }
}

/// Counts callbacks that arrive after `stop()` has returned.
final class StopProbe: Sendable {
    private let state = Locked((calls: 0, stopped: false, lateCalls: 0))

    var calls: Int { state.withLock { $0.calls } }
    var lateCalls: Int { state.withLock { $0.lateCalls } }

    func reset() { state.withLock { $0 = (calls: 0, stopped: false, lateCalls: 0) } }

    func markStopped() { state.withLock { $0.stopped = true } }

    func call() {
        state.withLock {
            $0.calls += 1
            if $0.stopped { $0.lateCalls += 1 }
        }
    }
}

@Suite struct DirectoryWatcherTests {
    let root = NSTemporaryDirectory() + "cordon-watch-" + UUID().uuidString.prefix(8).lowercased()

    func makeRoot() throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func removeRoot() { try? FileManager.default.removeItem(atPath: root) }

    /// A watcher on `directories` counting into `counter`.
    func watch(_ directories: [String], into counter: CallbackCounter) throws -> DirectoryWatcher {
        try DirectoryWatcher(directories: directories) { counter.increment() }
    }

    @Test func createModifyRenameAndDeleteEachFire() async throws {
        try makeRoot()
        defer { removeRoot() }
        let watched = root + "/policy.d"
        let outside = root + "/staging"
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let counter = CallbackCounter()
        let watcher = try watch([watched], into: counter)
        defer { watcher.stop() }
        let file = watched + "/10-admin.json"

        var seen = counter.value
        try Data("{}".utf8).write(to: URL(fileURLWithPath: file))
        #expect(await counter.waitForMoreThan(seen), "created")

        seen = counter.value
        try Data(#"{"version": 1}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(await counter.waitForMoreThan(seen), "modified")

        seen = counter.value
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\n".utf8))
        try handle.close()
        #expect(await counter.waitForMoreThan(seen), "appended in place")

        try Data("{}".utf8).write(to: URL(fileURLWithPath: outside + "/20-new.json"))
        seen = counter.value
        try FileManager.default.moveItem(atPath: outside + "/20-new.json", toPath: watched + "/20-new.json")
        #expect(await counter.waitForMoreThan(seen), "renamed into the directory")

        seen = counter.value
        try FileManager.default.removeItem(atPath: file)
        #expect(await counter.waitForMoreThan(seen), "deleted")

        seen = counter.value
        try FileManager.default.moveItem(atPath: watched + "/20-new.json", toPath: outside + "/20-new.json")
        #expect(await counter.waitForMoreThan(seen), "renamed out of the directory")
    }

    @Test func watchesSeveralDirectories() async throws {
        try makeRoot()
        defer { removeRoot() }
        let first = root + "/a"
        let second = root + "/b"
        for directory in [first, second] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let counter = CallbackCounter()
        let watcher = try watch([first, second], into: counter)
        defer { watcher.stop() }

        var seen = counter.value
        try Data("1".utf8).write(to: URL(fileURLWithPath: second + "/x.json"))
        #expect(await counter.waitForMoreThan(seen))
        seen = counter.value
        try Data("1".utf8).write(to: URL(fileURLWithPath: first + "/x.json"))
        #expect(await counter.waitForMoreThan(seen))
    }

    @Test func aDirectoryCreatedLaterIsNoticed() async throws {
        try makeRoot()
        defer { removeRoot() }
        let watched = root + "/etc/cordon/policy.d"
        let counter = CallbackCounter()
        let watcher = try watch([watched], into: counter)
        defer { watcher.stop() }

        var seen = counter.value
        try FileManager.default.createDirectory(atPath: root + "/etc", withIntermediateDirectories: false)
        #expect(await counter.waitForMoreThan(seen), "an ancestor appeared")
        seen = counter.value
        try FileManager.default.createDirectory(atPath: root + "/etc/cordon", withIntermediateDirectories: false)
        #expect(await counter.waitForMoreThan(seen), "the next ancestor appeared")
        seen = counter.value
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: false)
        #expect(await counter.waitForMoreThan(seen), "the directory appeared")

        seen = counter.value
        try Data("{}".utf8).write(to: URL(fileURLWithPath: watched + "/10-admin.json"))
        #expect(await counter.waitForMoreThan(seen), "a file written in the new directory")
    }

    /// `mkdir -p` can create the next component between the probe for it and the watch on its
    /// parent; `rearm()` checks again until the watched paths are stable, so it is never missed.
    @Test func aDirectoryCreatedWithItsParentsAtOnceIsWatched() async throws {
        try makeRoot()
        defer { removeRoot() }
        do {
            for trial in 1...5 {
                let watched = root + "/\(trial)/etc/cordon/policy.d"
                try FileManager.default.createDirectory(atPath: root + "/\(trial)", withIntermediateDirectories: false)
                let counter = CallbackCounter()
                let watcher = try watch([watched], into: counter)
                defer { watcher.stop() }

                try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
                #expect(await counter.waitForMoreThan(0))

                // Every batch re-arms; once the whole path exists, a file in it must be seen. Write
                // new files until one is reported (a re-arm may still be catching up at first).
                let clock = ContinuousClock()
                let deadline = clock.now.advanced(by: .seconds(10))
                var noticed = false
                var round = 0
                while !noticed && clock.now < deadline {
                    round += 1
                    let seen = counter.value
                    try Data("{}".utf8).write(to: URL(fileURLWithPath: watched + "/file-\(round).json"))
                    noticed = await counter.waitForMoreThan(seen, timeout: .milliseconds(500))
                }
                #expect(noticed, "trial \(trial): a file in the new directory is reported")
                if !noticed { break }
            }
        }
    }

    @Test func aDeletedAndRecreatedDirectoryIsWatchedAgain() async throws {
        try makeRoot()
        defer { removeRoot() }
        let watched = root + "/policy.d"
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        let counter = CallbackCounter()
        let watcher = try watch([watched], into: counter)
        defer { watcher.stop() }

        var seen = counter.value
        try FileManager.default.removeItem(atPath: watched)
        #expect(await counter.waitForMoreThan(seen), "the directory went away")
        seen = counter.value
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: false)
        #expect(await counter.waitForMoreThan(seen), "the directory came back")
        seen = counter.value
        try Data("{}".utf8).write(to: URL(fileURLWithPath: watched + "/10-admin.json"))
        #expect(await counter.waitForMoreThan(seen), "a file in the recreated directory")
    }

    @Test func noCallbacksAfterStop() async throws {
        try makeRoot()
        defer { removeRoot() }
        let watched = root + "/policy.d"
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        let stopped = CallbackCounter()
        let witness = CallbackCounter()
        let watcher = try watch([watched], into: stopped)
        // A second watcher on the same directory proves the later changes did happen.
        let witnessWatcher = try watch([watched], into: witness)
        defer { witnessWatcher.stop() }

        // A single inotify event (a subdirectory is created): exactly one batch, so once the
        // callback has run, nothing is in flight when stop() is called.
        try FileManager.default.createDirectory(atPath: watched + "/before", withIntermediateDirectories: false)
        #expect(await stopped.waitForMoreThan(0), "the watcher works before stop()")
        #expect(await witness.waitForMoreThan(0))

        watcher.stop()
        watcher.stop()  // Stopping twice is harmless.
        let atStop = stopped.value

        for index in 1...3 {
            let seen = witness.value
            try Data("{}".utf8).write(to: URL(fileURLWithPath: watched + "/after-\(index).json"))
            #expect(await witness.waitForMoreThan(seen), "the witness sees change \(index)")
        }
        let seen = witness.value
        try FileManager.default.removeItem(atPath: watched + "/before")
        #expect(await witness.waitForMoreThan(seen), "the witness sees the deletion")
        #expect(stopped.value == atStop, "no callback after stop()")
    }

    /// `stop()` excludes callbacks with a lock: a batch the thread already took from poll() is
    /// never reported after `stop()` has returned.
    @Test func callbacksAfterStopReturnsWhileChangesKeepComing() async throws {
        try makeRoot()
        defer { removeRoot() }
        let watched = root + "/policy.d"
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        let probe = StopProbe()
        let witness = CallbackCounter()
        let witnessWatcher = try watch([watched], into: witness)
        defer { witnessWatcher.stop() }

        do {
            for trial in 1...20 {
                probe.reset()
                let watcher = try DirectoryWatcher(directories: [watched]) { probe.call() }
                // Keep the watcher's thread busy with a stream of small batches, then stop it.
                var index = 0
                let clock = ContinuousClock()
                let deadline = clock.now.advanced(by: .seconds(10))
                while probe.calls < 10 && clock.now < deadline {
                    index += 1
                    try Data("x".utf8).write(to: URL(fileURLWithPath: watched + "/\(trial)-\(index)"))
                }
                watcher.stop()
                probe.markStopped()
                // More changes; once the witness has seen them, the stopped thread has long exited.
                let seen = witness.value
                for extra in 1...5 {
                    try Data("x".utf8).write(to: URL(fileURLWithPath: watched + "/\(trial)-after-\(extra)"))
                }
                #expect(await witness.waitForMoreThan(seen))
                #expect(probe.lateCalls == 0, "onChange ran \(probe.lateCalls) time(s) after stop() returned")
            }
        }
    }

    @Test func watchingNothingThatCanExistStillStarts() throws {
        // Every path has an existing ancestor ("/"), so this never throws.
        let counter = CallbackCounter()
        let watcher = try watch([root + "/does/not/exist"], into: counter)
        watcher.stop()
    }
}
