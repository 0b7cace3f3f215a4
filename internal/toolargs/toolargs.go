// Package toolargs checks the arguments of an MCP tool call as JSON
// decodes them (map[string]any), with error texts meant for the model
// that made the call.
package toolargs

import (
	"fmt"
	"slices"
	"strings"
)

// Known rejects misspelt arguments, which would otherwise be ignored
// silently.
func Known(args map[string]any, names ...string) error {
	for k := range args {
		if !slices.Contains(names, k) {
			return fmt.Errorf("unknown argument %q (expected %s)", k, strings.Join(names, ", "))
		}
	}
	return nil
}

// Get returns argument name as a T, def when absent or null; kind names
// T in the error text ("a string", "a number"...).
func Get[T any](args map[string]any, name string, def T, kind string) (T, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	t, ok := v.(T)
	if !ok {
		return def, fmt.Errorf(`argument %q must be %s, got %s`, name, kind, Type(v))
	}
	return t, nil
}

// Type names v's JSON type for an error text: "a string", "a number"...
func Type(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
