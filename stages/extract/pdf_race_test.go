//go:build race

package extract

// raceEnabled shortens the slowest loops under the race detector, which
// slows the WebAssembly interpreter path about tenfold.
const raceEnabled = true
