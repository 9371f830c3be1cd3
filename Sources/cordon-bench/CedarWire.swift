import CordonPolicy

/// What `scripts/cedar_bench.py` reads and prints (see its docstring).
enum CedarWire {
    /// The request mix file.
    struct Mix: Encodable {
        let repetitions: Int
        let warmup: Int
        let policies: [Policy]
    }

    /// One policy: its Cedar translation and the requests to decide.
    struct Policy: Encodable {
        let name: String
        let cedar: String
        let requests: [Request]
    }

    /// An app's facts.
    struct App: Encodable {
        let id: String
        let managed: Bool
    }

    /// A `DecisionRequest` as JSON (nil members are left out).
    struct Request: Encodable {
        let action: String
        let app: App
        let peer: App?
        let location: String?
        let contentType: String?
        let length: Int?

        init(_ request: DecisionRequest) {
            action = request.action.rawValue
            app = App(id: request.app.id, managed: request.app.managed)
            peer = request.peer.map { App(id: $0.id, managed: $0.managed) }
            location = request.location
            contentType = request.contentType
            length = request.length
        }
    }

    /// The script's output.
    struct Result: Decodable {
        let engine: String
        let version: String
        let policies: [PolicyResult]
    }

    /// One policy's Cedar figures and decisions, in request order.
    struct PolicyResult: Decodable {
        let name: String
        let batchSize: Int
        let repetitions: Int
        let medianNanoseconds: Double
        let p99Nanoseconds: Double
        /// The Rust engine alone (cedarpy's `authz_duration_micros`, whole µs per request).
        let engineMedianNanoseconds: Double
        let engineP99Nanoseconds: Double
        let decisions: [Bool]
    }
}
