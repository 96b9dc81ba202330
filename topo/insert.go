package topo

import "fmt"

// InsertLevel puts l among levels (finest first, ranks 0..n-1) where they
// stay nested, or merges it into a level with the same groups (its name
// gets "+" and l's name), or leaves levels as they are when it nests
// nowhere.
func InsertLevel(levels []Level, l Level, n int) []Level {
	for i := 0; i <= len(levels); i++ {
		if i < len(levels) && len(levels[i].Groups) == len(l.Groups) && fmt.Sprint(levels[i].Groups) == fmt.Sprint(l.Groups) {
			levels[i].Name += "+" + l.Name
			return levels
		}
		try := append(append(append([]Level{}, levels[:i]...), l), levels[i:]...)
		if ValidateLevels(try, n) == nil {
			return try
		}
	}
	return levels
}
