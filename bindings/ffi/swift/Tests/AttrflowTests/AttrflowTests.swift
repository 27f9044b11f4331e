// The scenarios of the Kotlin tests, in Swift: paging 201 subscribers, concurrent
// registrations retrying lock conflicts by the core's policy, typed errors with the core's messages, the app log,
// batch and idempotent registration, a chunk-size change, the customer directory, batch
// and keyed app-log appends.
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

    /// A retry policy patient enough for many threads contending for one lock.
    private let patientRetry = RetryPolicy(maxAttempts: 100_000, firstDelayMs: 1, maxDelayMs: 5, budgetMs: 120_000)

    /// Registers subscriber `n`, retrying lock conflicts by the core's policy.
    private func register(_ store: Store, _ n: Int) throws -> Subscriber {
        let id = String(format: "subscriber-%03d", n)
        return try store.subscriberArchive(flowId: flowId, retry: patientRetry)
            .register(subscriberId: id, deliveryAddress: "\(id)@example.com")
    }

    func testTwoHundredAndOneSubscribersPageBackInThreeChunks() throws {
        let store = try freshStore()
        let runId = try store.subscriberArchive(flowId: flowId).start()
        XCTAssertEqual(runId, try store.subscriberArchive(flowId: flowId).start())
        for n in 1...201 {
            XCTAssertEqual(UInt64(n), try register(store, n).sequence)
        }
        let current = try store.subscriberArchive(flowId: flowId).page(pageToken: "")
        XCTAssertEqual(current.pageToken, "current")
        XCTAssertEqual(current.subscribers.map(\.sequence), [201])
        XCTAssertEqual(current.nextPageToken, "00000000000000000101")
        let second = try store.subscriberArchive(flowId: flowId).page(pageToken: current.nextPageToken)
        XCTAssertEqual(second.subscribers.map(\.sequence), Array((101...200).reversed()).map(UInt64.init))
        XCTAssertEqual(second.nextPageToken, "00000000000000000001")
        let first = try store.subscriberArchive(flowId: flowId).page(pageToken: second.nextPageToken)
        XCTAssertEqual(first.subscribers.map(\.sequence), Array((1...100).reversed()).map(UInt64.init))
        XCTAssertEqual(first.nextPageToken, "")
    }

    func testConcurrentRegistrationsGetExactlyOneTo115() throws {
        let store = try freshStore()
        _ = try store.subscriberArchive(flowId: flowId).start()
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
        let current = try store.subscriberArchive(flowId: flowId).page(pageToken: "current")
        XCTAssertEqual(current.subscribers.count, 15)
        XCTAssertEqual(current.nextPageToken, "00000000000000000001")
    }

    func testBadTokensAreTypedErrorsWithTheCoreMessage() throws {
        let store = try freshStore()
        _ = try store.subscriberArchive(flowId: flowId).start()
        XCTAssertThrowsError(try store.subscriberArchive(flowId: flowId).page(pageToken: "7")) { error in
            guard case AttrflowError.InvalidPageToken(let reason, let token) = error else {
                return XCTFail("expected InvalidPageToken, got \(error)")
            }
            XCTAssertEqual(reason, "invalid page token \"7\"")
            XCTAssertEqual(token, "7")
        }
        XCTAssertThrowsError(try store.subscriberArchive(flowId: flowId).page(pageToken: "00000000000000000301")) { error in
            guard case AttrflowError.PageNotFound(let message) = error else {
                return XCTFail("expected PageNotFound, got \(error)")
            }
            XCTAssertEqual(message, "subscriber page \"00000000000000000301\" not found")
        }
        XCTAssertThrowsError(try store.subscriberArchive(flowId: "nobody").register(subscriberId: "s", deliveryAddress: "a")) { error in
            guard case AttrflowError.FlowNotFound(_, let missing) = error else {
                return XCTFail("expected FlowNotFound, got \(error)")
            }
            XCTAssertEqual(missing, "nobody")
        }
    }

    func testAppLogPagesNewestFirst() throws {
        let store = try freshStore()
        _ = try store.appLog(flowId: "my-app").start()
        for n in 1...150 {
            _ = try store.appLog(flowId: "my-app").append(log: "chat", recordJson: "{\"n\":\(n)}")
        }
        let newest = try store.appLog(flowId: "my-app").page(log: "chat", pageToken: "current")
        XCTAssertEqual(newest.entries.first?.recordJson, "{\"n\":150}")
        XCTAssertEqual(newest.entries.count, 50)
        XCTAssertEqual(newest.nextPageToken, "00000000000000000001")
    }

    private func batch(_ range: ClosedRange<Int>) -> [NewSubscriber] {
        range.map { n in
            let id = String(format: "subscriber-%03d", n)
            return NewSubscriber(subscriberId: id, deliveryAddress: "\(id)@example.com")
        }
    }

    private func allPages(_ store: Store) throws -> [SubscriberPage] {
        var pages: [SubscriberPage] = []
        var token = "current"
        while !token.isEmpty {
            let page = try store.subscriberArchive(flowId: flowId).page(pageToken: token)
            pages.append(page)
            token = page.nextPageToken
        }
        return pages
    }

    private func assertInvalidInput(_ call: @autoclosure () throws -> Any, _ expected: String,
                                    file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try call(), file: file, line: line) { error in
            guard case AttrflowError.InvalidInput(let message) = error else {
                return XCTFail("expected InvalidInput, got \(error)", file: file, line: line)
            }
            XCTAssertEqual(message, expected, file: file, line: line)
        }
    }

    func testBatchCrossingTwoChunkBoundariesPagesBackWhole() throws {
        let store = try freshStore()
        _ = try store.subscriberArchive(flowId: flowId).start()
        _ = try store.subscriberArchive(flowId: flowId).registerBatch(subscribers: batch(1...95))
        let registered = try store.subscriberArchive(flowId: flowId).registerBatch(subscribers: batch(96...215))
        XCTAssertEqual(registered.map(\.sequence), (96...215).map(UInt64.init))
        let pages = try allPages(store)
        XCTAssertEqual(pages.map(\.pageToken), ["current", "00000000000000000101", "00000000000000000001"])
        XCTAssertEqual(pages.map(\.subscribers.count), [15, 100, 100])
        XCTAssertEqual(pages.flatMap(\.subscribers).map(\.sequence), (1...215).reversed().map(UInt64.init))
    }

    func testIdempotentRetryFromAFreshStoreKeepsItsSequence() throws {
        let store = try freshStore()
        _ = try store.subscriberArchive(flowId: flowId).start()
        let batchKey = "import-2026-12"
        let firstBatch = try store.subscriberArchive(flowId: flowId).registerBatch(subscribers: batch(1...41), idempotencyKey: batchKey)
        XCTAssertEqual(firstBatch, try store.subscriberArchive(flowId: flowId).registerBatch(subscribers: batch(1...41), idempotencyKey: batchKey))
        let first = try store.subscriberArchive(flowId: flowId).registerOnce(idempotencyKey: "signup-ada", subscriberId: "ada", deliveryAddress: "ada@example.com")
        XCTAssertEqual(first.sequence, 42)
        let reopened = try Store.open(location: store.location(), durability: .normal)
        XCTAssertEqual(first, try reopened.subscriberArchive(flowId: flowId).registerOnce(idempotencyKey: "signup-ada", subscriberId: "ada", deliveryAddress: "ada@example.com"))
        let current = try reopened.subscriberArchive(flowId: flowId).page(pageToken: "current")
        XCTAssertEqual(current.subscribers.map(\.sequence), (1...42).reversed().map(UInt64.init))
        XCTAssertThrowsError(try reopened.subscriberArchive(flowId: flowId).registerOnce(idempotencyKey: "signup-ada", subscriberId: "ada", deliveryAddress: "ada@example.org")) { error in
            guard case AttrflowError.InvalidInput = error else {
                return XCTFail("expected InvalidInput, got \(error)")
            }
        }
    }

    func testOversizeBatchesAndBadKeysAreInvalidInput() throws {
        let store = try freshStore()
        _ = try store.subscriberArchive(flowId: flowId).start()
        assertInvalidInput(try store.subscriberArchive(flowId: flowId).registerBatch(subscribers: batch(1...1001)),
                           "a batch holds at most 1000 records, got 1001")
        assertInvalidInput(try store.subscriberArchive(flowId: flowId).registerBatch(subscribers: []),
                           "a batch needs at least one record")
        assertInvalidInput(try store.subscriberArchive(flowId: flowId).registerOnce(idempotencyKey: "has space", subscriberId: "ada", deliveryAddress: "ada@example.com"),
                           "idempotency key must be 1 to 128 visible ASCII characters, got \"has space\"")
        XCTAssertTrue(try store.subscriberArchive(flowId: flowId).page(pageToken: "current").subscribers.isEmpty)
        XCTAssertEqual(defaultIdempotencyWindow(), IdempotencyWindow(maxKeys: 100, maxAgeMs: 86_400_000))
    }

    func testChunkSizeChangeFrom100To50KeepsOldTokens() throws {
        let store = try freshStore()
        _ = try store.subscriberArchive(flowId: flowId).start()
        _ = try store.subscriberArchive(flowId: flowId).registerBatch(subscribers: batch(1...130))
        let oldest = try store.subscriberArchive(flowId: flowId).page(pageToken: "00000000000000000001")
        let change = try store.subscriberArchive(flowId: flowId).changeChunkSize(chunkSize: 50)
        XCTAssertEqual(change, ChunkSizeChange(chunkSize: 50, fromSequence: 201, layouts: [
            ChunkLayout(fromSequence: 1, chunkSize: 100), ChunkLayout(fromSequence: 201, chunkSize: 50),
        ]))
        _ = try store.subscriberArchive(flowId: flowId).registerBatch(subscribers: batch(131...260))
        let pages = try allPages(store)
        XCTAssertEqual(pages.map(\.pageToken),
                       ["current", "00000000000000000201", "00000000000000000101", "00000000000000000001"])
        XCTAssertEqual(pages.map(\.subscribers.count), [10, 50, 100, 100])
        XCTAssertEqual(oldest, try store.subscriberArchive(flowId: flowId).page(pageToken: "00000000000000000001"))
        assertInvalidInput(try store.subscriberArchive(flowId: flowId).changeChunkSize(chunkSize: 0),
                           "chunk size must be between 1 and 127, got 0")
    }

    func testCustomerDirectoryGoldenPartitionCollidingUpsertsAndTypedErrors() throws {
        let directory = customerDirectoryFlowId()
        XCTAssertEqual(try customerProfilePartition(emailAddress: " Alice@Example.COM "), "partition-278")
        let store = try freshStore()
        _ = try store.customerDirectory(flowId: directory).start()
        let bucket = try customerProfilePartition(emailAddress: "customer-0@example.com")
        var emails: [String] = []
        var n = 0
        while emails.count < 12 {
            let email = "customer-\(n)@example.com"
            if try customerProfilePartition(emailAddress: email) == bucket { emails.append(email) }
            n += 1
        }
        let profiles = emails.map {
            CustomerProfile(emailAddress: $0, fullName: "Name of \($0)", companyName: "Company of \($0)", customerTier: "gold")
        }
        let lock = NSLock()
        var failures: [Error] = []
        DispatchQueue.concurrentPerform(iterations: profiles.count) { index in
            do {
                _ = try store.customerDirectory(flowId: directory, retry: patientRetry)
                    .upsert(profile: profiles[index])
            } catch {
                lock.lock(); failures.append(error); lock.unlock()
            }
        }
        XCTAssertTrue(failures.isEmpty, "\(failures)")
        for profile in profiles {
            XCTAssertEqual(try store.customerDirectory(flowId: directory).get(emailAddress: profile.emailAddress), profile)
        }
        XCTAssertThrowsError(try store.customerDirectory(flowId: directory).get(emailAddress: "Nobody@Example.com")) { error in
            guard case AttrflowError.RecordNotFound(let message) = error else {
                return XCTFail("expected RecordNotFound, got \(error)")
            }
            XCTAssertEqual(message, "customer profile \"nobody@example.com\" not found")
        }
        var accented = profiles[0]
        accented.emailAddress = "josé@example.com"
        assertInvalidInput(try store.customerDirectory(flowId: directory).upsert(profile: accented),
                           "emailAddress must contain only ASCII characters")
    }

    func testAppLogBatchAndKeyedAppends() throws {
        let store = try freshStore()
        _ = try store.appLog(flowId: "my-app").start()
        let batch = try store.appLog(flowId: "my-app").appendBatch(log: "chat",
                                               recordsJson: (1...215).map { "{\"n\":\($0)}" })
        XCTAssertEqual(batch.map(\.sequence), (1...215).map(UInt64.init))
        let current = try store.appLog(flowId: "my-app").page(log: "chat", pageToken: "current")
        XCTAssertEqual(current.entries.count, 15)
        XCTAssertEqual(current.nextPageToken, "00000000000000000101")
        let first = try store.appLog(flowId: "my-app").appendOnce(log: "audit", idempotencyKey: "login-1",
                                                  recordJson: "{\"user\":\"ada\"}")
        let reopened = try Store.open(location: store.location(), durability: .normal)
        XCTAssertEqual(first, try reopened.appLog(flowId: "my-app").appendOnce(log: "audit", idempotencyKey: "login-1",
                                                               recordJson: "{\"user\":\"ada\"}"))
        XCTAssertEqual(try reopened.appLog(flowId: "my-app").page(log: "audit", pageToken: "current").entries, [first])
        assertInvalidInput(try store.appLog(flowId: "my-app").appendBatch(log: "audit", recordsJson: ["1", "null"]),
                           "records[1]: record is required")
    }
}
