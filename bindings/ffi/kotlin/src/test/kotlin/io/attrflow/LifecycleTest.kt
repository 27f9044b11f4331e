package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** A flow's run from outside its RPCs: stopFlow, describeFlow, getAttribute and setAttribute, as the core does them. */
class LifecycleTest {
    private val counter = flowType("Counter") {
        attribute("count")
        map("labels")
        defaultValue("count", 0)
        rpc<String, List<String>>("Labels") { added ->
            setMapInstance("labels", added, true)
            mapInstanceKeys("labels")
        }
        rpc<Unit, Int>("Increment", locks = listOf(lock("count"))) {
            val next = (attribute<Int>("count") ?: 0) + 1
            setAttribute("count", next)
            next
        }
    }

    private fun freshCounterStore(): Store =
        Store.openWithoutBuiltIns(scratchFolder("attrflow-lifecycle").resolve("attrflow.db").toString(), Durability.NORMAL)
            .also { it.registerFlowType(counter) }

    @Test
    fun `a stopped flow refuses RPCs and keeps its values`() {
        freshCounterStore().use { store ->
            val runId = store.startFlow("Counter", "c-1")
            assertEquals(1, store.invoke<Unit, Int>("Counter", "c-1", "Increment", Unit))
            val running = store.describeFlow("c-1")
            assertEquals(FlowInfo("c-1", runId, "Counter", "running", running.startedAtMs, null, null), running)
            assertTrue(running.startedAtMs > 0)

            store.stopFlow("c-1", StopType.FAIL, "operator")
            val refused = assertThrows<AttrflowException.FlowNotActive> {
                store.invoke<Unit, Int>("Counter", "c-1", "Increment", Unit)
            }
            assertEquals("failed", refused.status)
            assertEquals("c-1", refused.flowId)
            assertThrows<AttrflowException.FlowNotActive> { store.stopFlow("c-1") }
            val disallowed = assertThrows<AttrflowException.FlowAlreadyStarted> {
                store.startFlow("Counter", "c-1", ignoreAlreadyStarted = true, idReusePolicy = IdReusePolicy.DISALLOW)
            }
            assertEquals("failed", disallowed.status)
            assertEquals(runId, disallowed.runId)

            val stopped = store.describeFlow("c-1")
            assertEquals(stopped, store.waitForFlow("c-1", 30_000uL))
            assertEquals("failed", stopped.status)
            assertEquals("operator", stopped.reason)
            assertTrue(stopped.closedAtMs!! >= running.startedAtMs)
            assertEquals(1, store.attribute<Int>("c-1", "count"))
        }
    }

    @Test
    fun `waitForFlow returns once a stop commits and null while the flow runs`() {
        freshCounterStore().use { store ->
            store.startFlow("Counter", "c-5")
            assertEquals(null, store.waitForFlow("c-5", 50uL))
            val stopper = Thread { Thread.sleep(100); store.stopFlow("c-5", StopType.TERMINATE, "done") }
            stopper.start()
            val closed = store.waitForFlow("c-5", 30_000uL)
            stopper.join()
            assertEquals("terminated", closed?.status)
            assertEquals("done", closed?.reason)
            assertThrows<AttrflowException.FlowNotFound> { store.waitForFlow("nobody", 50uL) }
        }
    }

    @Test
    fun `waitForFlow reports the run it began in terminated once a start replaces it`() {
        freshCounterStore().use { store ->
            val waited = store.startFlow("Counter", "c-6")
            val started = store.describeFlow("c-6").startedAtMs
            var replacement: String? = null
            val replacer = Thread {
                Thread.sleep(200)
                replacement = store.startFlow("Counter", "c-6", idReusePolicy = IdReusePolicy.TERMINATE_IF_RUNNING)
            }
            replacer.start()
            val closed = store.waitForFlow("c-6", 30_000uL)
            replacer.join()
            assertEquals(waited, closed?.runId)
            assertEquals(started, closed?.startedAtMs)
            assertEquals("terminated", closed?.status)
            assertEquals("replaced by a new run (ALLOW_TERMINATE_IF_RUNNING)", closed?.reason)
            assertEquals(replacement, store.describeFlow("c-6").runId)
            assertEquals("running", store.describeFlow("c-6").status)
        }
    }

    @Test
    fun `a start under a used ID follows its ID reuse policy`() {
        freshCounterStore().use { store ->
            val first = store.startFlow("Counter", "c-4")
            assertEquals(1, store.invoke<Unit, Int>("Counter", "c-4", "Increment", Unit))
            val running = assertThrows<AttrflowException.FlowAlreadyStarted> { store.startFlow("Counter", "c-4") }
            assertEquals("running", running.status)
            store.stopFlow("c-4", StopType.FAIL, null)
            val refused = assertThrows<AttrflowException.FlowAlreadyStarted> {
                store.startFlow("Counter", "c-4", idReusePolicy = IdReusePolicy.DISALLOW)
            }
            assertEquals("failed", refused.status)
            // After a failed run, ALLOW_IF_PREVIOUS_FAILED (and the default) begin a new run
            // that holds only its own initial values.
            val second = store.startFlow("Counter", "c-4", idReusePolicy = IdReusePolicy.ALLOW_IF_PREVIOUS_FAILED)
            assertTrue(second != first)
            assertEquals(1, store.invoke<Unit, Int>("Counter", "c-4", "Increment", Unit))
            val third = store.startFlow("Counter", "c-4", idReusePolicy = IdReusePolicy.TERMINATE_IF_RUNNING)
            assertEquals(FlowInfo("c-4", third, "Counter", "running", store.describeFlow("c-4").startedAtMs, null, null), store.describeFlow("c-4"))
            assertEquals(0, store.attribute<Int>("c-4", "count"))
        }
    }

    @Test
    fun `getAttribute reads committed values and names what is wrong`() {
        freshCounterStore().use { store ->
            store.startFlow("Counter", "c-2")
            assertEquals(0, store.attribute<Int>("c-2", "count"))
            store.invoke<Unit, Int>("Counter", "c-2", "Increment", Unit)
            assertEquals("1", store.getAttribute("c-2", lock("count")))
            val undeclared = assertThrows<AttrflowException.InvalidInput> { store.getAttribute("c-2", lock("other")) }
            assertEquals("flow type \"Counter\" declares no Attribute or AttributeMap \"other\"", undeclared.reason)
            assertThrows<AttrflowException.FlowNotFound> { store.getAttribute("nobody", lock("count")) }
            assertThrows<AttrflowException.FlowNotFound> { store.describeFlow("nobody") }
        }
    }

    @Test
    fun `setAttribute writes what RPCs and waitForAttributeEqual see next and refuses what it cannot write`() {
        freshCounterStore().use { store ->
            store.healthCheck()
            store.startFlow("Counter", "c-3")
            store.setAttribute("c-3", "count", 41)
            assertEquals(42, store.invoke<Unit, Int>("Counter", "c-3", "Increment", Unit))
            store.setAttribute("c-3", "labels", "colour", "green")
            assertEquals("green", store.attribute<String>("c-3", "labels", "colour"))
            store.setAttribute("c-3", "labels", "size", "large")
            val loaded = InvokeOptions(loadMapInstances = listOf(load("labels", "colour"), load("labels", "shape")))
            assertEquals(listOf("colour", "new"), store.invoke<String, List<String>>("Counter", "c-3", "Labels", "new", loaded))
            store.setAttribute<String?>("c-3", "labels", "colour", null)
            assertEquals(null, store.attribute<String>("c-3", "labels", "colour"))

            val undeclared = assertThrows<AttrflowException.InvalidInput> { store.setAttribute("c-3", "other", 1) }
            assertEquals("flow type \"Counter\" declares no Attribute or AttributeMap \"other\"", undeclared.reason)
            val notJson = assertThrows<AttrflowException.InvalidInput> { store.setAttribute("c-3", lock("count"), "{") }
            assertTrue(notJson.reason.startsWith("the value for \"count\" is not JSON"), notJson.reason)
            assertThrows<AttrflowException.FlowNotFound> { store.setAttribute("nobody", "count", 1) }
            assertEquals(42, store.attribute<Int>("c-3", "count"))

            assertTrue(store.waitForAttributeEqual("c-3", lock("count"), "42", 0uL))
            assertEquals(false, store.waitForAttributeEqual("c-3", lock("count"), "43", 10uL))
            val waiter = Thread { store.setAttribute("c-3", "count", 43) }
            waiter.start()
            assertTrue(store.waitForAttributeEqual("c-3", lock("count"), "43", 30_000uL))
            waiter.join()
            store.setAttribute("c-3", "count", 42)
            val notScalar = assertThrows<AttrflowException.InvalidInput> {
                store.waitForAttributeEqual("c-3", lock("count"), "[42]", 0uL)
            }
            assertTrue(notScalar.reason.startsWith("wait_for_attribute_equal supports only string, boolean, or number"))

            store.stopFlow("c-3")
            assertThrows<AttrflowException.FlowNotActive> { store.waitForAttributeEqual("c-3", lock("count"), "42", 0uL) }
            assertThrows<AttrflowException.FlowNotActive> { store.setAttribute("c-3", "count", 0) }
            assertEquals(42, store.attribute<Int>("c-3", "count"))
        }
    }
}
