package soak

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// topics give the generated documents words that embed and match by
// keyword like prose does: each file talks about one topic.
var topics = [][]string{
	{"harbour", "ferry", "tide", "anchor", "dock", "sailor", "cargo", "lighthouse", "fog", "pier"},
	{"orchard", "apple", "pruning", "blossom", "harvest", "cider", "ladder", "frost", "bees", "grafting"},
	{"compiler", "parser", "syntax", "token", "register", "optimiser", "bytecode", "linker", "symbol", "inlining"},
	{"glacier", "moraine", "crevasse", "ice", "valley", "meltwater", "erosion", "summit", "snowfield", "boulder"},
	{"bakery", "dough", "oven", "yeast", "crust", "flour", "rye", "proofing", "loaf", "starter"},
	{"telescope", "nebula", "orbit", "comet", "galaxy", "lens", "eclipse", "planet", "observatory", "parallax"},
	{"invoice", "ledger", "payment", "audit", "budget", "refund", "tax", "receipt", "account", "balance"},
	{"violin", "orchestra", "tempo", "rehearsal", "conductor", "chord", "bow", "concerto", "score", "tuning"},
	{"railway", "signal", "timetable", "locomotive", "platform", "junction", "carriage", "track", "station", "freight"},
	{"beehive", "honey", "queen", "swarm", "pollen", "wax", "drone", "nectar", "colony", "smoker"},
}

var (
	verbs  = []string{"explains", "changes", "protects", "measures", "follows", "depends on", "replaces", "describes", "slows", "improves"}
	linked = []string{"while", "because", "although", "so that", "whenever", "after", "before", "unless"}
)

// Queries are the fixed questions whose top-k the final check compares.
var Queries = []string{
	"how the ferry waits for the tide at the harbour",
	"pruning apple trees after the frost",
	"the compiler parser turns tokens into syntax",
	"meltwater erosion below the glacier",
	"yeast and proofing the dough before the oven",
	"observing a comet through the telescope",
	"audit of the ledger and refund receipts",
	"the conductor sets the tempo in rehearsal",
	"signal at the railway junction",
	"the queen and the swarm leave the beehive",
}

// document writes sentences about topic t, seeded by r.
func document(r *rand.Rand, t, sentences int) string {
	words := topics[t]
	var b strings.Builder
	fmt.Fprintf(&b, "# The %s and the %s\n\n", words[r.IntN(len(words))], words[r.IntN(len(words))])
	for i := range sentences {
		w := func() string { return words[r.IntN(len(words))] }
		fmt.Fprintf(&b, "The %s %s the %s %s the %s %s the %s. ", w(), verbs[r.IntN(len(verbs))], w(),
			linked[r.IntN(len(linked))], w(), verbs[r.IntN(len(verbs))], w())
		if i%5 == 4 {
			b.WriteString("\n\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// plantToken is a made-up word no generated text holds: letters only, so
// every tokenizer keeps it one term.
func plantToken(n int) string {
	var b strings.Builder
	b.WriteString("zorblat")
	for {
		b.WriteByte(byte('a' + n%26))
		n /= 26
		if n == 0 {
			break
		}
	}
	return b.String() + "quix"
}
