import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon storage`: an administrator's view of apps' encrypted storage, through the agent.
struct StorageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage",
        abstract: "Inspect and change apps' encrypted key-value storage (for debugging an app).",
        discussion: """
            ls, get, put and rm name the app with --app and need the passcode (checked and counted \
            like `cordon unlock`, and audited); the records are read by the agent, never from the \
            file directly. usage needs no passcode: it reads no record.
            """,
        subcommands: [
            StorageListCommand.self, StorageGetCommand.self, StoragePutCommand.self, StorageRemoveCommand.self,
            StorageUsageCommand.self, StorageExportIdentityCommand.self,
        ])
}

/// Options of the commands that reach one app through the agent with the passcode.
struct StorageAppOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    @Option(help: ArgumentHelp("The app whose storage to reach.", valueName: "app-id"))
    var app: String

    /// Reads the passcode, connects and runs `body` with the client and the passcode.
    func run<R>(_ body: (CordonClient, String) async throws -> R) async throws -> R {
        try await passcode.withClient(global, body)
    }
}

/// Options of the commands that reach one app's records: the app and a namespace.
struct StorageRecordOptions: ParsableArguments {
    @OptionGroup var target: StorageAppOptions

    @Option(help: "The namespace (default: default).")
    var namespace: String?

    /// The app whose records to reach.
    var app: String { target.app }

    /// Reads the passcode, connects and runs `body` with the client and the passcode.
    func run<R>(_ body: (CordonClient, String) async throws -> R) async throws -> R {
        try await target.run(body)
    }
}

/// `cordon storage ls --app ID [PREFIX]`.
struct StorageListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List an app's record names.")

    @OptionGroup var options: StorageRecordOptions

    @Argument(help: "Only names that start with this prefix.")
    var prefix: String?

    func run() async throws {
        let names = try await options.run { client, passcode in
            try await client.storageList(
                appId: options.app, namespace: options.namespace, prefix: prefix, passcode: passcode)
        }
        for name in names { try Output.line(name) }
    }
}

/// `cordon storage get --app ID NAME`: writes the value to standard output as it is stored.
struct StorageGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Print one record's value.")

    @OptionGroup var options: StorageRecordOptions

    @Argument(help: "The record's name.")
    var name: String

    func run() async throws {
        let value = try await options.run { client, passcode in
            try await client.storageGet(
                appId: options.app, namespace: options.namespace, name: name, passcode: passcode)
        }
        FileHandle.standardOutput.write(value)
    }
}

/// `cordon storage put --app ID NAME VALUE`.
struct StoragePutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "put", abstract: "Store a value under a name.")

    @OptionGroup var options: StorageRecordOptions

    @Argument(help: "The record's name.")
    var name: String

    @Argument(help: "The value (UTF-8 text, at most 32768 bytes).")
    var value: String

    func run() async throws {
        try await options.run { client, passcode in
            try await client.storagePut(
                appId: options.app, namespace: options.namespace, name: name, value: Data(value.utf8),
                passcode: passcode)
        }
        try Output.line("stored \(name)")
    }
}

/// `cordon storage rm --app ID NAME`.
struct StorageRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a record.")

    @OptionGroup var options: StorageRecordOptions

    @Argument(help: "The record's name.")
    var name: String

    func run() async throws {
        let deleted = try await options.run { client, passcode in
            try await client.storageDelete(
                appId: options.app, namespace: options.namespace, name: name, passcode: passcode)
        }
        guard deleted else {
            throw CordonError.recordNotFound(namespace: options.namespace ?? "default", name: name)
        }
        try Output.line("deleted \(name)")
    }
}

/// `cordon storage usage`: records and bytes per app.
struct StorageUsageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "usage", abstract: "Show how many records and bytes each app stores.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let usage = try await client.storageUsage()
        await client.close()
        if json {
            try Output.line(try Output.json(usage))
            return
        }
        if usage.isEmpty { try Output.line("no app stores anything") }
        for app in usage {
            try Output.line("\(app.appId)\t\(Format.count(app.records, "record"))\t\(app.bytes) bytes")
        }
    }
}
