// The scenarios of the Kotlin tests, in Swift: paging 201 subscribers, concurrent
// registrations retrying lock conflicts, typed errors with the core's messages, the app log.
import Foundation
import XCTest

@testable import Attrflow

final class AttrflowTests: XCTestCase {
    private let flowId = subscriberArchiveFlowId()

    private func freshStore() throws -> Store {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("attrflow-swift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try Store.open(location: folder.appendingPathComponent("attrflow.db").path, durability: .normal)
    }

    private func register(_ store: Store, _ n: Int) throws -> Subscriber {
        let id = String(format: "subscriber-%03d", n)
        while true {
            do {
                return try store.registerSubscriber(flowId: flowId, subscriberId: id, deliveryAddress: "\(id)@example.com")
            } catch AttrflowError.LockConflict {
                usleep(1000)
            }
        }
    }

    func testTwoHundredAndOneSubscribersPageBackInThreeChunks() throws {
        let store = try freshStore()
        let runId = try store.startSubscriberArchive(flowId: flowId)
        XCTAssertEqual(runId, try store.startSubscriberArchive(flowId: flowId))
        for n in 1...201 {
            XCTAssertEqual(UInt64(n), try register(store, n).sequence)
        }
        let current = try store.getSubscriberPage(flowId: flowId, pageToken: "")
        XCTAssertEqual(current.pageToken, "current")
        XCTAssertEqual(current.subscribers.map(\.sequence), [201])
        XCTAssertEqual(current.nextPageToken, "00000000000000000101")
        let second = try store.getSubscriberPage(flowId: flowId, pageToken: current.nextPageToken)
        XCTAssertEqual(second.subscribers.map(\.sequence), Array((101...200).reversed()).map(UInt64.init))
        XCTAssertEqual(second.nextPageToken, "00000000000000000001")
        let first = try store.getSubscriberPage(flowId: flowId, pageToken: second.nextPageToken)
        XCTAssertEqual(first.subscribers.map(\.sequence), Array((1...100).reversed()).map(UInt64.init))
        XCTAssertEqual(first.nextPageToken, "")
    }

    func testConcurrentRegistrationsGetExactlyOneTo115() throws {
        let store = try freshStore()
        _ = try store.startSubscriberArchive(flowId: flowId)
        let lock = NSLock()
        var sequences: [UInt64] = []
        var failures: [Error] = []
        DispatchQueue.concurrentPerform(iterations: 115) { index in
            do {
                let subscriber = try register(store, index + 1)
                lock.lock(); sequences.append(subscriber.sequence); lock.unlock()
            } catch {
                lock.lock(); failures.append(error); lock.unlock()
            }
        }
        XCTAssertTrue(failures.isEmpty, "\(failures)")
        XCTAssertEqual(sequences.sorted(), (1...115).map(UInt64.init))
        let current = try store.getSubscriberPage(flowId: flowId, pageToken: "current")
        XCTAssertEqual(current.subscribers.count, 15)
        XCTAssertEqual(current.nextPageToken, "00000000000000000001")
    }

    func testBadTokensAreTypedErrorsWithTheCoreMessage() throws {
        let store = try freshStore()
        _ = try store.startSubscriberArchive(flowId: flowId)
        XCTAssertThrowsError(try store.getSubscriberPage(flowId: flowId, pageToken: "7")) { error in
            guard case AttrflowError.InvalidPageToken(let message) = error else {
                return XCTFail("expected InvalidPageToken, got \(error)")
            }
            XCTAssertEqual(message, "invalid page token \"7\"")
        }
        XCTAssertThrowsError(try store.getSubscriberPage(flowId: flowId, pageToken: "00000000000000000301")) { error in
            guard case AttrflowError.PageNotFound(let message) = error else {
                return XCTFail("expected PageNotFound, got \(error)")
            }
            XCTAssertEqual(message, "subscriber page \"00000000000000000301\" not found")
        }
        XCTAssertThrowsError(try store.registerSubscriber(flowId: "nobody", subscriberId: "s", deliveryAddress: "a")) { error in
            guard case AttrflowError.FlowNotFound = error else {
                return XCTFail("expected FlowNotFound, got \(error)")
            }
        }
    }

    func testAppLogPagesNewestFirst() throws {
        let store = try freshStore()
        _ = try store.startAppLog(flowId: "my-app")
        for n in 1...150 {
            _ = try store.appendLogRecord(flowId: "my-app", log: "chat", recordJson: "{\"n\":\(n)}")
        }
        let newest = try store.getLogPage(flowId: "my-app", log: "chat", pageToken: "current")
        XCTAssertEqual(newest.entries.first?.recordJson, "{\"n\":150}")
        XCTAssertEqual(newest.entries.count, 50)
        XCTAssertEqual(newest.nextPageToken, "00000000000000000001")
    }
}
