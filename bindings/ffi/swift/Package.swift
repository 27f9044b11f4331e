// swift-tools-version:5.9
// attrflow for Swift: the UniFFI-generated bindings (Sources/, regenerated and checked by
// scripts/ffi-generate.sh) over the attrflow_ffi library built by cargo. Link it with
//   cargo build --release -p attrflow-ffi
//   swift test -Xlinker -L../../../target/release
import PackageDescription

let package = Package(
    name: "Attrflow",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .library(name: "Attrflow", targets: ["Attrflow"]),
    ],
    targets: [
        // The C declarations of the library's exported functions.
        .systemLibrary(name: "AttrflowFFI", path: "Sources/AttrflowFFI"),
        .target(
            name: "Attrflow",
            dependencies: ["AttrflowFFI"],
            path: "Sources/Attrflow",
            linkerSettings: [.linkedLibrary("attrflow_ffi")]
        ),
        .testTarget(name: "AttrflowTests", dependencies: ["Attrflow"], path: "Tests/AttrflowTests"),
    ]
)
