// Command tlog checks attrflow's checkpoints and proofs with golang.org/x/mod/sumdb/tlog and
// /note, an implementation attrflow did not write. Usage:
//
//	go run . ATTRFLOW_BIN STORE FLOW LOG SIGNER_KEY_FILE VERIFIER_KEY
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

var bin, store, flow, logName string

func attrflow(args ...string) []byte {
	full := append([]string{"--store", store}, args...)
	out, err := exec.Command(bin, full...).Output()
	if err != nil {
		fail("attrflow %v: %v", args, err)
	}
	return out
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func hashes(list []string) []tlog.Hash {
	var out []tlog.Hash
	for _, text := range list {
		raw, err := base64.StdEncoding.DecodeString(text)
		if err != nil || len(raw) != tlog.HashSize {
			fail("bad hash %q", text)
		}
		var h tlog.Hash
		copy(h[:], raw)
		out = append(out, h)
	}
	return out
}

func main() {
	if len(os.Args) != 7 {
		fail("usage: tlog ATTRFLOW_BIN STORE FLOW LOG SIGNER_KEY_FILE VERIFIER_KEY")
	}
	bin, store, flow, logName = os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	keyFile, verifierKey := os.Args[5], os.Args[6]

	// Leaf hashes of the exported lines, and the stored hashes tlog keeps.
	var leaves []tlog.Hash
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, index := range indexes {
			out[i] = stored[index]
		}
		return out, nil
	})
	scanner := bufio.NewScanner(bytes.NewReader(attrflow("export", flow, "--log", logName)))
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		line := scanner.Bytes()
		leaf := tlog.RecordHash(line)
		more, err := tlog.StoredHashesForRecordHash(int64(len(leaves)), leaf, reader)
		if err != nil {
			fail("stored hashes: %v", err)
		}
		leaves = append(leaves, leaf)
		stored = append(stored, more...)
	}
	n := int64(len(leaves))
	root := func(size int64) tlog.Hash {
		h, err := tlog.TreeHash(size, reader)
		if err != nil {
			fail("tree hash %d: %v", size, err)
		}
		return h
	}

	// The checkpoint: signature, size and root.
	verifier, err := note.NewVerifier(verifierKey)
	if err != nil {
		fail("verifier key: %v", err)
	}
	signed, err := note.Open(attrflow("checkpoint", flow, "--log", logName, "--key", keyFile), note.VerifierList(verifier))
	if err != nil {
		fail("checkpoint signature: %v", err)
	}
	lines := strings.Split(signed.Text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		fail("checkpoint body %q", signed.Text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size != n {
		fail("checkpoint size %q, exported %d records", lines[1], n)
	}
	if got := hashes([]string{lines[2]})[0]; got != root(n) {
		fail("checkpoint root %s != tlog.TreeHash %s", got, root(n))
	}

	// Inclusion proofs: every record of a small log, a sample of a large one (every 37th,
	// about a hundred records for the largest), at sizes n and smaller trees.
	checked := 0
	stride := max(int64(37), n/97)
	for seq := int64(1); seq <= n; seq++ {
		if n > 200 && (seq-1)%stride != 0 && seq != n {
			continue
		}
		for _, m := range []int64{n, seq, (seq + n) / 2} {
			var proof struct {
				LeafIndex int64    `json:"leafIndex"`
				TreeSize  int64    `json:"treeSize"`
				Hashes    []string `json:"hashes"`
			}
			out := attrflow("prove", flow, "--log", logName, "--sequence", fmt.Sprint(seq), "--tree-size", fmt.Sprint(m))
			if err := json.Unmarshal(out, &proof); err != nil || proof.LeafIndex != seq-1 || proof.TreeSize != m {
				fail("inclusion proof output %s", out)
			}
			if err := tlog.CheckRecord(hashes(proof.Hashes), m, root(m), seq-1, leaves[seq-1]); err != nil {
				fail("tlog.CheckRecord(seq %d, size %d): %v", seq, m, err)
			}
			checked++
		}
	}

	// Consistency proofs between sizes.
	sizes := []int64{1, 2, 3, n / 3, n / 2, n - 1, n}
	for _, from := range sizes {
		for _, to := range sizes {
			if from < 1 || to > n || from > to {
				continue
			}
			var proof struct {
				From   int64    `json:"from"`
				To     int64    `json:"to"`
				Hashes []string `json:"hashes"`
			}
			out := attrflow("prove", flow, "--log", logName, "--from", fmt.Sprint(from), "--to", fmt.Sprint(to))
			if err := json.Unmarshal(out, &proof); err != nil || proof.From != from || proof.To != to {
				fail("consistency proof output %s", out)
			}
			if err := tlog.CheckTree(hashes(proof.Hashes), to, root(to), from, root(from)); err != nil {
				fail("tlog.CheckTree(%d, %d): %v", from, to, err)
			}
			checked++
		}
	}
	fmt.Printf("ok: %d records, checkpoint and %d proofs checked by golang.org/x/mod/sumdb\n", n, checked)
}
