package io.attrflow

import java.util.Collections
import java.util.concurrent.CountDownLatch
import kotlin.concurrent.thread
import kotlinx.serialization.Serializable
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Flow types defined in Kotlin run on the core: its checks, locks, snapshots and commits. */
class KotlinFlowTest {
    private val flow = KotlinSubscriberFlow
    private val flowId = "kotlin-subscriber-archive"

    private fun freshBareStore(): Store {
        val folder = scratchFolder("attrflow-kotlin-flow")
        return Store.openWithoutBuiltIns(folder.resolve("attrflow.db").toString(), Durability.NORMAL).also {
            it.registerFlowType(flow.definition)
        }
    }

    @Test
    fun `the Kotlin subscriber flow pages 201 records with exact tokens`() {
        freshBareStore().use { store ->
            val runId = flow.start(store, flowId)
            assertEquals(runId, flow.start(store, flowId), "start is idempotent")
            for (n in 1..201) {
                assertEquals(n.toLong(), flow.register(store, flowId, n).sequence)
            }
            val current = flow.page(store, flowId, "")
            assertEquals("current", current.pageToken)
            assertEquals(listOf(KotlinSubscriberFlow.Subscriber(201, "subscriber-201", "subscriber-201@example.com")), current.subscribers)
            assertEquals("00000000000000000101", current.nextPageToken)
            val second = flow.page(store, flowId, current.nextPageToken)
            assertEquals((200L downTo 101L).toList(), second.subscribers.map { it.sequence })
            assertEquals("00000000000000000001", second.nextPageToken)
            val first = flow.page(store, flowId, second.nextPageToken)
            assertEquals((100L downTo 1L).toList(), first.subscribers.map { it.sequence })
            assertEquals("", first.nextPageToken)

            val missing = assertThrows<AttrflowException.HandlerFailure> { flow.page(store, flowId, "00000000000000000301") }
            assertEquals("subscriber page \"00000000000000000301\" not found", missing.reason)
            assertEquals("java.util.NoSuchElementException", missing.errorType)
            val invalid = assertThrows<AttrflowException.HandlerFailure> { flow.page(store, flowId, "00000000000000000002") }
            assertEquals("invalid page token \"00000000000000000002\"", invalid.reason)
            assertEquals("java.lang.IllegalArgumentException", invalid.errorType)
        }
    }

    @Test
    fun `95 sequential and 20 concurrent appends give exactly 1 to 115`() {
        freshBareStore().use { store ->
            flow.start(store, flowId)
            for (n in 1..95) flow.register(store, flowId, n)
            val sequences = Collections.synchronizedList(mutableListOf<Long>())
            val errors = Collections.synchronizedList(mutableListOf<Throwable>())
            val go = CountDownLatch(1)
            val threads = (96..115).map { n ->
                thread {
                    go.await()
                    runCatching { flow.register(store, flowId, n, patientRetry) }
                        .onSuccess { sequences += it.sequence }
                        .onFailure { errors += it }
                }
            }
            go.countDown()
            threads.forEach { it.join() }
            assertEquals(emptyList<Throwable>(), errors)
            assertEquals((96L..115L).toList(), sequences.sorted())
            val stored = flow.allPages(store, flowId).flatMap { it.subscribers }.map { it.sequence }
            assertEquals((115L downTo 1L).toList(), stored)
        }
    }

    @Serializable
    data class Note(val text: String)

    private val notes = flowType("Notes") {
        attribute("note")
        map("drafts")
        rpc<Note, Unit>("Write", locks = listOf(lock("note"))) { setAttribute("note", it) }
        rpc<Unit, Note?>("Read") { attribute<Note>("note") }
        rpc<Note, Unit>("WriteThenThrow", locks = listOf(lock("note"))) {
            setAttribute("note", it)
            setMapInstance("drafts", "a", it)
            throw IllegalStateException("boom after staging ${it.text}")
        }
        rpc<String, Note?>("ReadDraft") { mapInstance<Note>("drafts", it) }
        rpc<String, Unit>("SaveDraft") { setMapInstance("drafts", it, Note(it)) }
        rpc<Unit, List<String>>("Ids") { listOf(flowId, runId) }
        rpc<Unit, Map<String, Note?>>("AllDrafts", loadMaps = listOf("drafts")) {
            mapInstanceKeys("drafts").associateWith { mapInstance<Note>("drafts", it) }
        }
        rpc<Note, Unit>("WriteThroughStore", locks = listOf(lock("note"))) {
            setAttribute("note", it)
            storeOf.getValue(flowId).invoke<String, Unit>("Notes", flowId, "SaveDraft", it.text)
        }
    }

    /** The store each Notes flow runs in, so a handler can (wrongly) call back into it. */
    private val storeOf = mutableMapOf<String, Store>()

    private fun notesStore(flowId: String): Store = freshBareStore().also {
        it.registerFlowType(notes)
        it.startFlow("Notes", flowId)
        storeOf[flowId] = it
    }

    @Test
    fun `a throwing handler stores nothing, releases its locks and reports its exception`() {
        notesStore("notes").use { store ->
            store.invoke<Note, Unit>("Notes", "notes", "Write", Note("kept"))
            val failure = assertThrows<AttrflowException.HandlerFailure> {
                store.invoke<Note, Unit>("Notes", "notes", "WriteThenThrow", Note("lost"))
            }
            assertEquals("java.lang.IllegalStateException", failure.errorType)
            assertEquals("boom after staging lost", failure.reason)
            assertEquals(Note("kept"), store.invoke<Unit, Note?>("Notes", "notes", "Read", Unit))
            val draft = InvokeOptions(loadMapInstances = listOf(load("drafts", "a")))
            assertNull(store.invoke<String, Note?>("Notes", "notes", "ReadDraft", "a", draft))
            // The lock was released: the next locking call runs at once, without a retry.
            store.invoke<Note, Unit>("Notes", "notes", "Write", Note("after"))
            assertEquals(Note("after"), store.invoke<Unit, Note?>("Notes", "notes", "Read", Unit))
        }
    }

    @Test
    fun `a handler sees its flow's ID and the run ID its start returned`() {
        freshBareStore().use { store ->
            store.registerFlowType(notes)
            val runId = store.startFlow("Notes", "ids")
            assertEquals(listOf("ids", runId), store.invoke<Unit, List<String>>("Notes", "ids", "Ids", Unit))
        }
    }

    @Test
    fun `per-call options load and lock map instances`() {
        notesStore("per-call").use { store ->
            store.invoke<String, Unit>("Notes", "per-call", "SaveDraft", "x")
            val notLoaded = assertThrows<AttrflowException.HandlerFailure> {
                store.invoke<String, Note?>("Notes", "per-call", "ReadDraft", "x")
            }
            assertEquals("AttributeMap instance was not loaded for RPC: drafts/x", notLoaded.reason)
            assertEquals("io.attrflow.AttrflowException.AttributeMapNotLoaded", notLoaded.errorType)
            val options = InvokeOptions(lockMapInstances = listOf(load("drafts", "x")), loadMapInstances = listOf(load("drafts", "x")))
            assertEquals(Note("x"), store.invoke<String, Note?>("Notes", "per-call", "ReadDraft", "x", options))
            val unknown = assertThrows<AttrflowException.InvalidInput> {
                store.invoke<String, Note?>("Notes", "per-call", "ReadDraft", "x", InvokeOptions(loadMapInstances = listOf(load("nope", "x"))))
            }
            assertEquals("flow type \"Notes\" declares no Attribute or AttributeMap \"nope\"", unknown.reason)
        }
    }

    @Test
    fun `a map loaded whole is read whole`() {
        notesStore("whole").use { store ->
            assertEquals(emptyMap<String, Note?>(), store.invoke<Unit, Map<String, Note?>>("Notes", "whole", "AllDrafts", Unit))
            for (key in listOf("b", "a", "c d")) store.invoke<String, Unit>("Notes", "whole", "SaveDraft", key)
            assertEquals(
                mapOf("a" to Note("a"), "b" to Note("b"), "c d" to Note("c d")),
                store.invoke<Unit, Map<String, Note?>>("Notes", "whole", "AllDrafts", Unit),
            )
        }
    }

    @Test
    fun `a handler calling back into its store gets the core's error`() {
        notesStore("reentrant").use { store ->
            val failure = assertThrows<AttrflowException.HandlerFailure> {
                store.invoke<Note, Unit>("Notes", "reentrant", "WriteThroughStore", Note("again"))
            }
            assertEquals("io.attrflow.AttrflowException.InvalidInput", failure.errorType)
            assertTrue(
                failure.reason.contains("an RPC handler cannot write to the store it is running in"),
                failure.reason,
            )
            assertNull(store.invoke<Unit, Note?>("Notes", "reentrant", "Read", Unit))
            val draft = InvokeOptions(loadMapInstances = listOf(load("drafts", "again")))
            assertNull(store.invoke<String, Note?>("Notes", "reentrant", "ReadDraft", "again", draft))
        }
    }

    @Test
    fun `a bad definition is refused with the core's message`() {
        fun refused(block: FlowTypeScope.() -> Unit): String =
            assertThrows<AttrflowException.InvalidInput> { flowType("Bad", block = block) }.reason

        assertEquals(
            "flow type \"Bad\" declares no Attribute or AttributeMap \"nope\"",
            refused { rpc<Unit, Unit>("R", locks = listOf(lock("nope"))) {} },
        )
        assertEquals(
            "lock on AttributeMap \"m\" needs an instance",
            refused { map("m"); rpc<Unit, Unit>("R", locks = listOf(lock("m"))) {} },
        )
        assertEquals(
            "flow type \"Bad\" declares no Attribute or AttributeMap \"nope\"",
            refused { rpc<Unit, Unit>("R", loads = listOf(load("nope", "x"))) {} },
        )
        assertEquals(
            "\"a\" is a singleton Attribute, not an AttributeMap; only an AttributeMap loads whole",
            refused { attribute("a"); rpc<Unit, Unit>("R", loadMaps = listOf("a")) {} },
        )
        assertEquals("flow type \"Bad\" declares \"a\" twice", refused { attribute("a"); map("a") })
        assertEquals(
            "flow type \"Bad\" declares RPC \"R\" twice",
            refused { rpc<Unit, Unit>("R") {}; rpc<Unit, Unit>("R") {} },
        )
        assertTrue(refused { attribute("a/b") }.contains("\"a/b\""))
        freshBareStore().use { store ->
            val again = assertThrows<AttrflowException.InvalidInput> { store.registerFlowType(flow.definition) }
            assertEquals("flow type \"ChunkedSubscriberFlow\" is already registered", again.reason)
        }
    }
}
