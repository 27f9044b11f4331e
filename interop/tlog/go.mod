module attrflow/interop/tlog

go 1.26.8

require golang.org/x/mod v0.43.0
