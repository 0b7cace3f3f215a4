package eval

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// NoAnswer is a query that no document of a set answers: a random string,
// keyboard mash, an off-topic question, or a near miss (the set's kind of
// question about something it does not cover). Written before any was
// scored; a search should return nothing for it at the default threshold.
type NoAnswer struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"` // random, mash, offtopic or nearmiss
	Query string `json:"query"`
	Sets  string `json:"sets"` // "all" or the sets it is asked of, comma-separated
}

//go:embed noanswer.jsonl
var noAnswerJSONL []byte

// noAnswerHeldOutJSONL was written after the calibration was chosen on
// noanswer.jsonl and before any of it was scored: a check on queries the
// calibration never saw.
//
//go:embed noanswer-heldout.jsonl
var noAnswerHeldOutJSONL []byte

// NoAnswers returns the no-answer queries asked of the set called set.
func NoAnswers(set string) ([]NoAnswer, error) {
	return parseNoAnswers("noanswer.jsonl", noAnswerJSONL, set)
}

// HeldOutNoAnswers returns the held-out no-answer queries asked of set.
func HeldOutNoAnswers(set string) ([]NoAnswer, error) {
	return parseNoAnswers("noanswer-heldout.jsonl", noAnswerHeldOutJSONL, set)
}

func parseNoAnswers(file string, b []byte, set string) ([]NoAnswer, error) {
	var out []NoAnswer
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		var q NoAnswer
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return nil, fmt.Errorf("eval: %s line %d: %w", file, n, err)
		}
		if q.ID == "" || q.Query == "" || q.Sets == "" || seen[q.ID] ||
			!slices.Contains([]string{"random", "mash", "offtopic", "nearmiss"}, q.Kind) {
			return nil, fmt.Errorf("eval: %s line %d: needs a new id, a known kind, query and sets", file, n)
		}
		seen[q.ID] = true
		if q.Sets == "all" || slices.Contains(strings.Split(q.Sets, ","), set) {
			out = append(out, q)
		}
	}
	return out, sc.Err()
}
