import Testing

@testable import CordonServer

@Suite("BoundedQueue")
struct BoundedQueueTests {
    @Test func startsEmpty() {
        var queue = BoundedQueue<Int>(capacity: 3)
        #expect(queue.isEmpty)
        #expect(queue.count == 0)
        #expect(queue.capacity == 3)
        #expect(queue.pop() == nil)
    }

    @Test func popsInFIFOOrder() {
        var queue = BoundedQueue<String>(capacity: 4)
        for element in ["a", "b", "c"] { #expect(queue.push(element) == true) }
        #expect(queue.count == 3)
        #expect(queue.pop() == "a")
        #expect(queue.pop() == "b")
        #expect(queue.push("d") == true)
        #expect(queue.pop() == "c")
        #expect(queue.pop() == "d")
        #expect(queue.pop() == nil)
        #expect(queue.isEmpty)
    }

    @Test func overflowIsRefusedAndDropped() {
        var queue = BoundedQueue<Int>(capacity: 2)
        #expect(queue.push(1) == true)
        #expect(queue.push(2) == true)
        #expect(queue.push(3) == false)
        #expect(queue.count == 2)
        #expect(queue.pop() == 1)
        #expect(queue.pop() == 2)
        #expect(queue.pop() == nil, "the refused element was not kept")
    }

    @Test func poppingMakesRoomAgain() {
        var queue = BoundedQueue<Int>(capacity: 1)
        #expect(queue.push(1) == true)
        #expect(queue.push(2) == false)
        #expect(queue.pop() == 1)
        #expect(queue.push(3) == true)
        #expect(queue.push(4) == false)
        #expect(queue.pop() == 3)
    }

    @Test func manyCyclesKeepOrderAndCapacity() {
        // Well past the internal compaction threshold, with the queue never fully drained.
        var queue = BoundedQueue<Int>(capacity: 100)
        var next = 0
        var expected = 0
        for round in 0..<2_000 {
            let pushes = 1 + round % 7
            for _ in 0..<pushes where queue.count < queue.capacity {
                #expect(queue.push(next) == true)
                next += 1
            }
            let pops = round % 5
            for _ in 0..<pops {
                guard let value = queue.pop() else { break }
                #expect(value == expected)
                expected += 1
            }
            #expect(queue.count == next - expected)
            #expect(queue.count <= queue.capacity)
        }
        while let value = queue.pop() {
            #expect(value == expected)
            expected += 1
        }
        #expect(expected == next)
        #expect(next > 3_000)
    }

    @Test func fillAndDrainRepeatedly() {
        var queue = BoundedQueue<Int>(capacity: 70)
        for cycle in 0..<50 {
            for index in 0..<70 { #expect(queue.push(cycle * 100 + index) == true) }
            #expect(queue.push(-1) == false)
            #expect(queue.count == 70)
            for index in 0..<70 { #expect(queue.pop() == cycle * 100 + index) }
            #expect(queue.isEmpty)
            #expect(queue.pop() == nil)
        }
    }

    @Test func fullQueueStaysFullAcrossCompaction() {
        var queue = BoundedQueue<Int>(capacity: 10)
        for value in 0..<10 { #expect(queue.push(value) == true) }
        var expected = 0
        for value in 10..<1_000 {
            #expect(queue.pop() == expected)
            expected += 1
            #expect(queue.push(value) == true)
            #expect(queue.push(-1) == false)
            #expect(queue.count == 10)
        }
        #expect(Array(sequence(state: queue) { $0.pop() }) == Array(990..<1_000))
    }
}
