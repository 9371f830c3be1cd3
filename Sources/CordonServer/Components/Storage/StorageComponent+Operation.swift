import CordonAppStorage
import CordonProtocol
import CordonSecrets
import Foundation
import NIOCore

/// One `io.cordon.Storage` record call, parsed on the loop and run on the store pool.
struct StorageOperation: Sendable {
    /// The record methods of `io.cordon.Storage`.
    enum Record {
        case put, get, delete, list
    }

    enum Kind: Sendable {
        case put(name: String, value: [UInt8])
        case get(name: String)
        case delete(name: String)
        case list(prefix: String)
    }

    let kind: Kind
    let namespace: String
    /// An administrator's call names the app and gives the passcode.
    let appId: String?
    let passcode: String?

    /// The audited action name.
    var action: String {
        switch kind {
        case .put: "storage.put"
        case .get: "storage.get"
        case .delete: "storage.delete"
        case .list: "storage.list"
        }
    }

    init(_ record: Record, _ call: ComponentCall) throws(VarlinkError) {
        switch record {
        case .put:
            let parameters = try call.parameters(StoragePutParameters.self)
            // The bound is checked on the encoded length first, so no oversized value is decoded.
            let limit = (AppStorage.maxValueBytes + 2) / 3 * 4
            guard parameters.value.utf8.count <= limit + 4 else {
                throw CordonError.valueTooLarge(
                    size: parameters.value.utf8.count / 4 * 3, limit: AppStorage.maxValueBytes
                ).varlinkError
            }
            guard let value = Data(base64Encoded: parameters.value) else { throw .invalidParameter("value") }
            kind = .put(name: parameters.name, value: Array(value))
            (appId, passcode) = (parameters.appId, parameters.passcode)
            namespace = parameters.namespace ?? AppStorage.defaultNamespace
        case .get, .delete:
            let parameters = try call.parameters(StorageRecordParameters.self)
            kind = record == .get ? .get(name: parameters.name) : .delete(name: parameters.name)
            (appId, passcode) = (parameters.appId, parameters.passcode)
            namespace = parameters.namespace ?? AppStorage.defaultNamespace
        case .list:
            let parameters = try call.parameters(StorageListParameters.self)
            kind = .list(prefix: parameters.prefix ?? "")
            (appId, passcode) = (parameters.appId, parameters.passcode)
            namespace = parameters.namespace ?? AppStorage.defaultNamespace
        }
    }

    /// Runs on the store pool.
    func run(on storage: AppStorage) throws(CordonError) -> StorageResult {
        switch kind {
        case .put(let name, let value):
            try storage.put(namespace: namespace, name: name, value: value)
            return .done
        case .get(let name):
            guard
                let value = try storage.withValue(namespace: namespace, name: name, { Base64.string($0) })
            else { throw .recordNotFound(namespace: namespace, name: name) }
            return .value(value)
        case .delete(let name):
            return .deleted(try storage.delete(namespace: namespace, name: name))
        case .list(let prefix):
            return .names(try storage.list(namespace: namespace, prefix: prefix))
        }
    }
}

/// What a record call answers.
enum StorageResult: Sendable {
    case done
    case value(String)
    case deleted(Bool)
    case names([String])

    func encode(_ encoder: ReplyEncoder) -> ByteBuffer {
        switch self {
        case .done: encoder.empty()
        case .value(let value): encoder.reply(StorageGetReply(value: value))
        case .deleted(let deleted): encoder.reply(StorageDeleteReply(deleted: deleted))
        case .names(let names): encoder.reply(StorageListReply(names: names))
        }
    }
}
