/// `io.cordon.Storage.Put`: stores `value` (base64) under `name` in `namespace` (default
/// `default`). With `appId` and `passcode`, an administrator's call for that app (audited).
public struct StoragePutParameters: Codable, Sendable, Equatable {
    public var namespace: String?
    public var name: String
    public var value: String
    public var appId: String?
    public var passcode: String?

    public init(namespace: String? = nil, name: String, value: String, appId: String? = nil, passcode: String? = nil) {
        self.namespace = namespace
        self.name = name
        self.value = value
        self.appId = appId
        self.passcode = passcode
    }
}

/// `io.cordon.Storage.Get` and `Delete`: one record by namespace and name.
public struct StorageRecordParameters: Codable, Sendable, Equatable {
    public var namespace: String?
    public var name: String
    public var appId: String?
    public var passcode: String?

    public init(namespace: String? = nil, name: String, appId: String? = nil, passcode: String? = nil) {
        self.namespace = namespace
        self.name = name
        self.appId = appId
        self.passcode = passcode
    }
}

/// The reply of `io.cordon.Storage.Get`: the value, base64.
public struct StorageGetReply: Codable, Sendable, Equatable {
    public var value: String

    public init(value: String) { self.value = value }
}

/// The reply of `io.cordon.Storage.Delete`: whether a record was there.
public struct StorageDeleteReply: Codable, Sendable, Equatable {
    public var deleted: Bool

    public init(deleted: Bool) { self.deleted = deleted }
}

/// `io.cordon.Storage.List`: the names in `namespace` starting with `prefix`.
public struct StorageListParameters: Codable, Sendable, Equatable {
    public var namespace: String?
    public var prefix: String?
    public var appId: String?
    public var passcode: String?

    public init(namespace: String? = nil, prefix: String? = nil, appId: String? = nil, passcode: String? = nil) {
        self.namespace = namespace
        self.prefix = prefix
        self.appId = appId
        self.passcode = passcode
    }
}

/// The reply of `io.cordon.Storage.List`.
public struct StorageListReply: Codable, Sendable, Equatable {
    public var names: [String]

    public init(names: [String]) { self.names = names }
}

/// One app's storage: its records and the bytes of its file and log.
public struct StorageAppUsage: Codable, Sendable, Equatable {
    public var appId: String
    public var records: Int
    public var bytes: Int

    public init(appId: String, records: Int, bytes: Int) {
        self.appId = appId
        self.records = records
        self.bytes = bytes
    }
}

/// The reply of `io.cordon.Storage.Usage`.
public struct StorageUsageReply: Codable, Sendable, Equatable {
    public var apps: [StorageAppUsage]

    public init(apps: [StorageAppUsage]) { self.apps = apps }
}

/// `io.cordon.Storage.ExportIdentity`'s reply: the app's age identity and recipient.
public struct StorageExportIdentityReply: Codable, Sendable, Equatable {
    /// `AGE-SECRET-KEY-1…`.
    public var identity: String
    /// `age1…`.
    public var recipient: String

    public init(identity: String, recipient: String) {
        self.identity = identity
        self.recipient = recipient
    }
}

/// `io.cordon.Storage.WipeApp`: crypto-erases one app's data (selective wipe); also the
/// parameters of `ExportIdentity`.
public struct StorageWipeAppParameters: Codable, Sendable, Equatable {
    public var appId: String
    public var passcode: String

    public init(appId: String, passcode: String) {
        self.appId = appId
        self.passcode = passcode
    }
}
