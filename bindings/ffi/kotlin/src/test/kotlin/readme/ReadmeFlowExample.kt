import io.attrflow.Durability
import io.attrflow.InvokeOptions
import io.attrflow.Store
import io.attrflow.flowType
import io.attrflow.invoke
import io.attrflow.load
import io.attrflow.lock
import kotlinx.serialization.Serializable

@Serializable
data class Tally(val total: Int)

val tallyFlow = flowType("TallyFlow") {
    attribute("tally")
    map("notes")
    rpc<Int, Tally>("Add", locks = listOf(lock("tally"))) { amount ->
        val tally = Tally((attribute<Tally>("tally")?.total ?: 0) + amount)
        setAttribute("tally", tally)
        setMapInstance("notes", "added-${tally.total}", "+$amount")
        tally
    }
    rpc<String, String>("Note") { key ->
        mapInstance<String>("notes", key) ?: throw NoSuchElementException(key)
    }
}

fun tallyExample(location: String): String =
    Store.open(location, Durability.FULL).use { store ->
        store.registerFlowType(tallyFlow)
        store.startFlow("TallyFlow", "tally-1", ignoreAlreadyStarted = true)
        println(store.invoke<Int, Tally>("TallyFlow", "tally-1", "Add", 5))
        val options = InvokeOptions(loadMapInstances = listOf(load("notes", "added-5")))
        store.invoke<String, String>("TallyFlow", "tally-1", "Note", "added-5", options)
    }
