// Package quickstart holds no code: its test runs the README's quick start
// (the sections "Quick start" and "Your own folder and a client") as a
// newcomer would, in a private copy of the tree, so that a README change
// that breaks them fails make test.
package quickstart
