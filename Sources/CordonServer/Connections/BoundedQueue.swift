/// A FIFO with a fixed capacity: a subscriber's events waiting for its socket to drain.
struct BoundedQueue<Element: Sendable>: Sendable {
    private var storage: [Element] = []
    private var head = 0
    let capacity: Int

    init(capacity: Int) {
        precondition(capacity > 0, "a queue needs room for one element")
        self.capacity = capacity
    }

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }

    /// Appends `element`; returns false (and drops it) when the queue is full.
    mutating func push(_ element: Element) -> Bool {
        guard count < capacity else { return false }
        storage.append(element)
        return true
    }

    /// Removes and returns the oldest element.
    mutating func pop() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head > 64 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
