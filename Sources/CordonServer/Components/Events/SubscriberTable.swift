import CordonLifecycle

/// The streaming connections, by id and as one flat array for the broadcast loop (1,000
/// subscribers are walked per event; an array of them beats a dictionary's buckets).
struct SubscriberTable {
    private var byID: [ConnectionID: Subscriber] = [:]
    /// Every subscriber once; each knows its index here, so removal is a swap.
    private(set) var values: ContiguousArray<Subscriber> = []

    var isEmpty: Bool { values.isEmpty }

    subscript(id: ConnectionID) -> Subscriber? {
        get { byID[id] }
        set {
            removeValue(forKey: id)
            guard let newValue else { return }
            newValue.index = values.count
            values.append(newValue)
            byID[id] = newValue
        }
    }

    /// Removes the subscriber of connection `id`, if there is one.
    @discardableResult
    mutating func removeValue(forKey id: ConnectionID) -> Subscriber? {
        guard let removed = byID.removeValue(forKey: id) else { return nil }
        let last = values.removeLast()
        if last !== removed {
            values[removed.index] = last
            last.index = removed.index
        }
        return removed
    }
}
