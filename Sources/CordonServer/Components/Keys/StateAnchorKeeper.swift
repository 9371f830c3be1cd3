import CordonSecrets
import CordonStore
import CordonTPM
import Foundation

/// Makes and opens the TPM anchor of the security state (docs/ARCHITECTURE.md, "State anchor"):
/// an NV counter of the TPM and a TPM-sealed HMAC key. Runs on the store pool (each operation
/// opens the TPM and closes it, as `KeySealing` does).
struct StateAnchorKeeper: Sendable {
    /// The TCTI configuration of the TPM.
    let tcti: String

    /// The owner range of NV indices (TPM 2.0 Part 2, "TPM_HT_NV_INDEX"; TCG handle registry:
    /// 0x01000000–0x013FFFFF for owner-defined indices).
    static let indexRange: ClosedRange<UInt32> = 0x0100_0000...0x013F_FFFF

    /// A new anchor: a counter at a free random index with a random authValue, and a random HMAC
    /// key sealed by the TPM without a passcode (the state is checked before any unlock).
    func create() throws -> StateAnchor {
        let tpm = try TPMConnection(tcti: tcti)
        let custody = KeyCustody()
        let authorization = custody.makeSecret()
        defer { authorization.zero() }
        var index: UInt32?
        for _ in 0..<8 {
            let candidate = UInt32.random(in: Self.indexRange)
            do throws(TPMCounterError) {
                try tpm.defineCounter(index: candidate, authorization: authorization)
                index = candidate
                break
            } catch .indexTaken {
                continue
            } catch .tpm(let error) {
                throw error
            }
        }
        guard let index else { throw TPMError.failed(code: 0, "no free NV index after 8 tries") }
        let key = custody.makeSecret()
        defer { key.zero() }
        let empty = SecureBytes(count: 1)  // one zero byte: the TPM trims it to the empty authValue
        let sealed = try tpm.seal(key, authorization: empty, pcrs: [])
        let reference = StateAnchorReference(
            index: index, authorization: authorization.withUnsafeBytes { Array($0) },
            keyPublic: sealed.publicBlob, keyPrivate: sealed.privateBlob)
        return key.withUnsafeBytes { bytes in
            StateAnchor(reference: reference, counter: counter(reference), key: Array(bytes))
        }
    }

    /// Removes the counter of an anchor that was never stored (a container whose creation failed).
    func remove(_ reference: StateAnchorReference) {
        try? TPMConnection(tcti: tcti).undefine(index: reference.index)
    }

    /// The anchor `reference` names, its HMAC key unsealed by this TPM.
    func open(_ reference: StateAnchorReference) throws -> StateAnchor {
        let tpm = try TPMConnection(tcti: tcti)
        let empty = SecureBytes(count: 1)  // one zero byte: the TPM trims it to the empty authValue
        let key = try tpm.unseal(
            TPMSealedObject(publicBlob: reference.keyPublic, privateBlob: reference.keyPrivate, pcrs: []),
            authorization: empty)
        defer { key.zero() }
        return key.withUnsafeBytes { bytes in
            StateAnchor(reference: reference, counter: counter(reference), key: Array(bytes))
        }
    }

    /// Opens the anchor the database holds and checks the state against it (`CordonDatabase.attach`);
    /// nil when the database holds none. A failure leaves the database refusing writes of the state.
    func attach(to database: CordonDatabase, keystoreIndex: UInt32?) -> Result<StateAnchor?, StateAnchorError> {
        let reference: StateAnchorReference?
        do {
            reference = try database.loadAnchorReference()
        } catch {
            database.refuseState(.unverified("\(error)"))
            return .failure(.unverified("\(error)"))
        }
        guard let reference else {
            if keystoreIndex != nil {
                database.refuseState(.missing)
                return .failure(.missing)
            }
            return .success(nil)
        }
        if let keystoreIndex, keystoreIndex != reference.index {
            database.refuseState(.missing)
            return .failure(.missing)
        }
        let anchor: StateAnchor
        do {
            anchor = try open(reference)
        } catch {
            return .failure(Self.refuse(database, unreachable: error))
        }
        do throws(StateAnchorError) {
            try database.attach(anchor)
        } catch .counterFailed {
            // Why the counter failed, from the TPM itself (a failure path only: read once more).
            do {
                _ = try anchor.counter.read()
                return .failure(database.anchorProblem ?? .counterFailed("the counter failed once"))
            } catch {
                return .failure(Self.refuse(database, unreachable: error))
            }
        } catch {
            return .failure(error)
        }
        return .success(anchor)
    }

    /// Refuses the state for a TPM failure: no TPM answers (asked again at the next check), or a
    /// TPM that answers and no longer holds the anchor (lost: the recovery key's case).
    private static func refuse(_ database: CordonDatabase, unreachable error: any Error) -> StateAnchorError {
        let problem: StateAnchorError =
            if case .unavailable? = error as? TPMError { .unverified("\(error)") } else { .lost("\(error)") }
        database.refuseState(problem)
        return problem
    }

    func counter(_ reference: StateAnchorReference) -> TPMCounter {
        TPMCounter(tcti: tcti, index: reference.index, authorization: reference.authorization)
    }
}

/// A TPM NV counter, opened for each read and increment.
struct TPMCounter: MonotonicCounter {
    let tcti: String
    let index: UInt32
    let authorization: [UInt8]

    func read() throws -> UInt64 {
        let auth = SecureBytes(copying: authorization)
        defer { auth.zero() }
        return try TPMConnection(tcti: tcti).readCounter(index: index, authorization: auth)
    }

    func increment() throws {
        let auth = SecureBytes(copying: authorization)
        defer { auth.zero() }
        try TPMConnection(tcti: tcti).incrementCounter(index: index, authorization: auth)
    }
}
