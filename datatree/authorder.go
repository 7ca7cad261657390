package datatree

import (
	"unicode/utf16"

	"github.com/zabd/zabd/wire"
)

// AuthOrder returns a connection's identities without duplicates, in the
// order ZooKeeper 3.8 holds them: its ServerCnxn keeps them in a set backed
// by a java.util.concurrent.ConcurrentHashMap, whose iteration order follows
// the ids' Java hash codes. That order shows in the ACLs an "auth" entry
// expands to and in whoAmI replies, so it is reproduced exactly: jute's
// Id.hashCode, ConcurrentHashMap's spreading, bins of a table of 16 doubling
// once 3/4 full, and the order its resize leaves a split bin in.
func AuthOrder(ids []wire.Id) []wire.Id {
	type entry struct {
		hash int32
		id   wire.Id
	}
	n := 16
	bins := make([][]entry, n)
	count := 0
	for _, id := range ids {
		h := chmSpread(idHash(id))
		bin := bins[int(h)&(n-1)]
		dup := false
		for _, e := range bin {
			if e.id == id {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		bins[int(h)&(n-1)] = append(bin, entry{h, id})
		count++
		if count >= n-n/4 {
			// Resize: each bin splits into a low and a high bin. The
			// longest tail whose entries all go the same way keeps its
			// order; the entries before it are pushed on the front of
			// their list one by one, so they end up reversed.
			grown := make([][]entry, 2*n)
			for i, bin := range bins {
				if len(bin) == 0 {
					continue
				}
				last := len(bin) - 1
				for last > 0 && int(bin[last-1].hash)&n == int(bin[len(bin)-1].hash)&n {
					last--
				}
				var lo, hi []entry
				if int(bin[last].hash)&n == 0 {
					lo = append(lo, bin[last:]...)
				} else {
					hi = append(hi, bin[last:]...)
				}
				for _, e := range bin[:last] {
					if int(e.hash)&n == 0 {
						lo = append([]entry{e}, lo...)
					} else {
						hi = append([]entry{e}, hi...)
					}
				}
				grown[i], grown[i+n] = lo, hi
			}
			bins, n = grown, 2*n
		}
	}
	out := make([]wire.Id, 0, count)
	for _, bin := range bins {
		for _, e := range bin {
			out = append(out, e.id)
		}
	}
	return out
}

// chmSpread is ConcurrentHashMap.spread.
func chmSpread(h int32) int32 { return (h ^ int32(uint32(h)>>16)) & 0x7fffffff }

// idHash is the hashCode jute generates for Id{scheme, id}.
func idHash(id wire.Id) int32 {
	result := int32(17)
	result = 37*result + javaStringHash(id.Scheme)
	return 37*result + javaStringHash(id.ID)
}

// javaStringHash is String.hashCode over the string's UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + r1
			h = 31*h + r2
			continue
		}
		h = 31*h + r
	}
	return h
}
