package storage

import (
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"math/bits"
	"slices"

	"github.com/zabd/zabd/wire"
)

// How a crash can and cannot leave the newest log file (docs/storage.md
// argues each point):
//
//   - Everything before the in-flight window — the bytes written since the
//     file's last successful fsync — is exactly as written. The window is
//     at most writeChunk bytes, or one larger record.
//   - The window was written over zeros: a log file is written once, front
//     to back, into preallocated space, and never appended to after a
//     restart.
//   - A crash keeps, loses or tears each crashSector-sized sector of the
//     window on its own; a lost or torn sector reads as zeros from some
//     point to the sector's end. So a crash never makes a byte nonzero that
//     was not written there, nor zero unless zeros run from it to a sector
//     boundary.
//   - The file's size changes only by preallocation, in multiples of the
//     preallocation size (a multiple of crashSector); a crash may lose the
//     last change, never leave another size. Recovery's own cut, and
//     Truncate, leave other sizes, but such a file is never written again.
//
// Damage that these rules rule out is not a torn write, and recovery refuses
// it rather than cut acknowledged txns.

// crashSector is the granularity at which recovery assumes a crash loses or
// tears unsynced data. Disks write 512-byte or 4 KiB sectors; every 4 KiB
// boundary is a 512-byte one, so 512 is right for both.
const crashSector = 512

// adlerMod is Adler-32's modulus.
const adlerMod = 65521

// damage is recovery's reading of the first bad spot in a log file: where
// the valid records end, what follows, and whether a crash can have left it.
type damage struct {
	at   *CorruptError // where the valid records end, and why
	prev int64         // zxid of the last valid record before it (or the file's floor)

	flip     *flipFix   // one flipped bit that makes the damaged record valid, if any
	crash    bool       // a crash's lost or torn sectors can explain the damaged record
	cutShort bool       // the file ends inside the damaged record at a size no crash leaves
	complete bool       // the damaged record has a plausible length, fits in the file and ends with 'B'
	after    validAfter // valid records anywhere after the damage
}

// flipFix is a bit whose flip makes the damaged record (or file header)
// valid.
type flipFix struct {
	offset    int64 // of the byte holding the bit
	bit       uint
	zxid      int64 // of the record once fixed; 0 for the file header
	nextValid bool  // the record right after the fixed one is valid
}

// validAfter summarizes the valid records found after the damage: records
// that pass their checksum, decode as txns, and raise the zxid.
type validAfter struct {
	count       int
	first, last int64 // their zxids
	end         int64 // where the last of them ends
}

// refusal says why the damage in the newest log file cannot be cut off as a
// torn write, or "" if it can (see the rules above). It refuses only when a
// txn may be at stake: a flipped record, one cut short, valid records after
// the damage, or a complete record.
func (d *damage) refusal() string {
	switch {
	case d.flip != nil && (d.flip.nextValid || d.flip.zxid != 0):
		return "one flipped bit in a record written in full, which no crash does"
	case d.cutShort:
		return fmt.Sprintf("no crash leaves a log file of a size that is not a multiple of %d bytes: it was cut short", crashSector)
	case d.crash:
		if d.after.count > 0 && d.after.end-d.at.Offset > writeChunk {
			return fmt.Sprintf("valid txns follow it up to %d bytes further on, more than the %d bytes a crash can leave half-written", d.after.end-d.at.Offset, writeChunk)
		}
		return ""
	case d.after.count > 0:
		return "damage that no crash leaves, followed by valid txns"
	case d.complete:
		return "a record written in full whose bytes no crash can have changed"
	}
	return ""
}

// stake names the txns the damage would lose.
func (d *damage) stake() string {
	from := d.prev + 1
	if d.flip != nil && d.flip.zxid != 0 {
		from = d.flip.zxid
	}
	switch {
	case d.after.count > 0:
		return fmt.Sprintf("txns %#x..%#x were written in full and may have been acknowledged", from, d.after.last)
	case d.flip != nil && d.flip.zxid != 0:
		return fmt.Sprintf("txn %#x was written in full and may have been acknowledged", from)
	}
	return fmt.Sprintf("txns from %#x on may have been acknowledged", from)
}

// analyzeDamage reads the log file r (size bytes) around the damage bad,
// which follows valid records up to zxid prev.
func analyzeDamage(r io.ReaderAt, size int64, name string, bad *CorruptError, prev int64) (*damage, error) {
	d := &damage{at: bad, prev: prev}
	img := &fileImage{r: r, size: size, name: name}
	var err error
	if bad.Offset == 0 {
		d.flip, err = img.headerFlip(prev)
		if err == nil {
			d.crash, err = img.headerCrash()
		}
		d.cutShort = size < fileHeaderLen && size%crashSector != 0
	} else {
		d.flip, err = img.recordFlip(bad.Offset, prev)
		if err == nil {
			d.crash, err = img.recordCrash(bad.Offset)
		}
		if err == nil {
			d.complete, d.cutShort, err = img.recordExtent(bad.Offset)
		}
	}
	if err != nil {
		return nil, err
	}
	d.after, err = img.findValidAfter(bad.Offset+1, prev)
	return d, err
}

// fileImage reads one log file for the damage analysis.
type fileImage struct {
	r    io.ReaderAt
	size int64
	name string
}

// read returns the bytes of [off, off+n) that lie inside the file, zero
// filled beyond its end.
func (f *fileImage) read(off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if off >= f.size {
		return b, nil
	}
	want := min(n, f.size-off)
	got, err := f.r.ReadAt(b[:want], off)
	if int64(got) == want {
		return b, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("read %s at offset %d: %w", f.name, off, err)
}

// recordAt checks the record at off and, if it is valid and raises the zxid
// above prev, returns its zxid and where it ends.
func (f *fileImage) recordAt(off, prev int64) (zxid, end int64, ok bool, err error) {
	s := &logScanner{r: f.r, size: f.size, name: f.name, off: off, prevZxid: prev, TrustPadding: true}
	ok, err = s.Next()
	return s.Zxid, s.Offset(), ok, err
}

// headerFlip reports the bit whose flip makes the file header's magic and
// version right, if one does.
func (f *fileImage) headerFlip(prev int64) (*flipFix, error) {
	h, err := f.read(0, fileHeaderLen)
	if err != nil || f.size < fileHeaderLen {
		return nil, err
	}
	want := appendFileHeader(nil, wire.TxnLogMagic, 0)
	off, bit, ok := oneBitApart(h[:8], want[:8])
	if !ok {
		return nil, nil
	}
	_, _, next, err := f.recordAt(fileHeaderLen, prev)
	return &flipFix{offset: off, bit: bit, nextValid: next}, err
}

// oneBitApart reports whether a and b differ in exactly one bit, and which.
func oneBitApart(a, b []byte) (off int64, bit uint, ok bool) {
	found := false
	for i := range a {
		x := a[i] ^ b[i]
		if x == 0 {
			continue
		}
		if found || bits.OnesCount8(x) != 1 {
			return 0, 0, false
		}
		off, bit, found = int64(i), uint(bits.TrailingZeros8(x)), true
	}
	return off, bit, found
}

// recordFlip looks for one bit of the record at off — in its checksum,
// length, entry or end byte — whose flip makes it valid with a zxid above
// prev.
func (f *fileImage) recordFlip(off, prev int64) (*flipFix, error) {
	if off+12 > f.size {
		return nil, nil
	}
	head, err := f.read(off, 12)
	if err != nil {
		return nil, err
	}
	sum := binary.BigEndian.Uint64(head)
	n0 := int32(binary.BigEndian.Uint32(head[8:]))
	// The length as read, then each one-bit change of it.
	for k := -1; k < 32; k++ {
		n := n0
		if k >= 0 {
			n ^= int32(1) << k
		}
		if n <= 0 || n > maxEntryLen || off+12+int64(n)+1 > f.size {
			continue
		}
		rec, err := f.read(off+12, int64(n)+1)
		if err != nil {
			return nil, err
		}
		var fix *flipFix
		if k >= 0 {
			fix = f.fixIf(rec, sum, prev, off+8+int64(3-k/8), uint(k%8))
		} else {
			fix = f.entryFlip(rec, sum, prev, off)
		}
		if fix != nil {
			_, _, fix.nextValid, err = f.recordAt(off+12+int64(n)+1, fix.zxid)
			return fix, err
		}
	}
	return nil, nil
}

// fixIf returns a fix at (byteOff, bit) if the record rec (entry and end
// byte) with checksum field sum is valid as it is.
func (f *fileImage) fixIf(rec []byte, sum uint64, prev int64, byteOff int64, bit uint) *flipFix {
	n := len(rec) - 1
	if rec[n] != endOfRecord {
		return nil
	}
	zxid, reason := checkEntry(rec[:n], sum, prev, true)
	if reason != "" {
		return nil
	}
	return &flipFix{offset: byteOff, bit: bit, zxid: zxid}
}

// entryFlip looks for the flipped bit in the checksum field, the end byte or
// the entry of the record at off whose length field is right: rec is its
// entry and end byte.
func (f *fileImage) entryFlip(rec []byte, sum uint64, prev int64, off int64) *flipFix {
	n := len(rec) - 1
	entry := rec[:n]
	got := uint64(adler32.Checksum(entry))
	// In the checksum field: the entry matches a sum one bit away.
	if x := sum ^ got; bits.OnesCount64(x) == 1 {
		k := bits.TrailingZeros64(x)
		return f.fixIf(rec, got, prev, off+int64(7-k/8), uint(k%8))
	}
	// In the end byte.
	if x := rec[n] ^ endOfRecord; bits.OnesCount8(x) == 1 {
		fixed := append([]byte(nil), rec...)
		fixed[n] = endOfRecord
		return f.fixIf(fixed, sum, prev, off+12+int64(n), uint(bits.TrailingZeros8(x)))
	}
	if rec[n] != endOfRecord || sum>>32 != 0 {
		return nil
	}
	// In the entry. Flipping bit b of byte i changes the byte by d = ±2^b,
	// Adler-32's A sum by d and its B sum by (n-i)·d (mod 65521): A's
	// difference gives d, B's then gives n-i.
	dA := mod(int64(sum&0xffff) - int64(got&0xffff))
	dB := mod(int64(sum>>16) - int64(got>>16))
	for b := uint(0); b < 8; b++ {
		for _, d := range []int64{1 << b, -(1 << b)} {
			if mod(d) != dA {
				continue
			}
			k := dB * modInverse(mod(d)) % adlerMod // ≡ n-i, and n-i is in [1, n]
			if k == 0 {
				k = adlerMod
			}
			for t := k; t <= int64(n); t += adlerMod {
				i := int64(n) - t
				wasSet := d > 0 // the byte as written had the bit set, the disk has it clear
				if (entry[i]>>b&1 == 1) == wasSet {
					continue
				}
				fixed := append([]byte(nil), rec...)
				fixed[i] ^= 1 << b
				if fix := f.fixIf(fixed, sum, prev, off+12+i, b); fix != nil {
					return fix
				}
			}
		}
	}
	return nil
}

func mod(x int64) int64 { return ((x % adlerMod) + adlerMod) % adlerMod }

// modInverse is x's inverse modulo the prime adlerMod (x is not 0).
func modInverse(x int64) int64 {
	result, base := int64(1), x
	for e := adlerMod - 2; e > 0; e >>= 1 {
		if e&1 == 1 {
			result = result * base % adlerMod
		}
		base = base * base % adlerMod
	}
	return result
}

// unknowns reads the bytes of [off, off+n) that lie inside the file and
// marks each one a crash could have zeroed: zeros that run to a sector
// boundary. Bytes past the end of the file (from off+len(data) on) are
// unknown as well. The file's size must be a multiple of crashSector.
func (f *fileImage) unknowns(off, n int64) (data []byte, unknown []bool, err error) {
	end := min(off+n, f.size)
	if end <= off {
		return nil, nil, nil
	}
	readEnd := min(f.size, (end+crashSector-1)/crashSector*crashSector)
	data, err = f.read(off, readEnd-off)
	if err != nil {
		return nil, nil, err
	}
	unknown = make([]bool, end-off)
	// Walk back from each sector's end while the bytes are zero.
	zeroFrom := int64(-1) // start of the zero run that reaches the current boundary
	for q := readEnd - 1; q >= off; q-- {
		zero := data[q-off] == 0
		switch {
		case (q+1)%crashSector == 0:
			zeroFrom = -1
			if zero {
				zeroFrom = q
			}
		case zero && zeroFrom == q+1:
			zeroFrom = q
		}
		if q < end && zeroFrom == q {
			unknown[q-off] = true
		}
	}
	return data[:end-off], unknown, nil
}

// headerCrash reports whether a crash can explain a bad file header: it
// holds only the right bytes and bytes a crash could have zeroed.
func (f *fileImage) headerCrash() (bool, error) {
	if f.size%crashSector != 0 {
		return false, nil
	}
	h, unknown, err := f.unknowns(0, 8)
	if err != nil {
		return false, err
	}
	want := appendFileHeader(nil, wire.TxnLogMagic, 0)
	lost := len(h) < 8
	for i := range h {
		switch {
		case unknown[i]:
			lost = true
		case h[i] != want[i]:
			return false, nil
		}
	}
	return lost, nil
}

// recordCrash reports whether a crash can explain the damaged record at off:
// whether the bytes a crash could have zeroed (zeros that run to a sector
// boundary, and bytes past the end of the file) can have been written so
// that the record's checksum and end byte are right. It is a necessary
// condition for a crash, checked exactly when at most two entry bytes are in
// question and by their sum (Adler-32's A) when more are.
func (f *fileImage) recordCrash(off int64) (bool, error) {
	if f.size%crashSector != 0 {
		return false, nil
	}
	head, unknown, err := f.unknowns(off, 12)
	if err != nil {
		return false, err
	}
	for i := range min(len(head), 4) { // the checksum field's high half is always zero
		if !unknown[i] && head[i] != 0 {
			return false, nil
		}
	}
	if len(head) < 12 || slices.Contains(unknown[4:], true) {
		return true, nil // the checksum or length itself may be lost
	}
	sum := binary.BigEndian.Uint64(head)
	n := int64(int32(binary.BigEndian.Uint32(head[8:])))
	if n <= 0 || n > maxEntryLen {
		return false, nil
	}
	rec, unknown, err := f.unknowns(off+12, n+1)
	if err != nil {
		return false, err
	}
	inFile := min(int64(len(rec)), n) // entry bytes inside the file
	endLost := int64(len(rec)) <= n || unknown[n]
	if !endLost && rec[n] != endOfRecord {
		return false, nil
	}
	// The entry positions a crash may have zeroed (they read as zero): the
	// first three of them, and how many there are.
	var lost []int64
	nLost := n - inFile
	for i := range n {
		if i < inFile && !unknown[i] {
			continue
		}
		if i >= inFile && len(lost) == 3 {
			break
		}
		if i < inFile {
			nLost++
		}
		if len(lost) < 3 {
			lost = append(lost, i)
		}
	}
	// Adler-32 of the entry with the lost bytes as zeros: that of the bytes
	// inside the file, extended by n-inFile zeros (which leave A alone and
	// add A to B once per byte).
	got := adler32.Checksum(rec[:inFile])
	a, b := int64(got&0xffff), int64(got>>16)
	b = (b + (n-inFile)%adlerMod*a) % adlerMod
	dA := mod(int64(sum&0xffff) - a)
	dB := mod(int64(sum>>16) - b)
	switch {
	case nLost == 0:
		return endLost && dA == 0 && dB == 0, nil
	case nLost == 1:
		return dA <= 255 && (n-lost[0])*dA%adlerMod == dB, nil
	case nLost == 2:
		c1, c2 := n-lost[0], n-lost[1]
		for w1 := int64(0); w1 <= 255; w1++ {
			if w2 := mod(dA - w1); w2 <= 255 && (c1*w1+c2*w2)%adlerMod == dB {
				return true, nil
			}
		}
		return false, nil
	}
	return 255*nLost >= adlerMod || dA <= 255*nLost, nil
}

// recordExtent reports whether the record at off looks complete (a
// plausible length, inside the file, ending with 'B') and whether the file
// ends inside it at a size no crash leaves.
func (f *fileImage) recordExtent(off int64) (complete, cutShort bool, err error) {
	if off+12 > f.size {
		return false, f.size%crashSector != 0, nil
	}
	head, err := f.read(off, 12)
	if err != nil {
		return false, false, err
	}
	n := int64(int32(binary.BigEndian.Uint32(head[8:])))
	if n <= 0 || n > maxEntryLen {
		return false, false, nil
	}
	end := off + 12 + n
	if end >= f.size {
		return false, f.size%crashSector != 0, nil
	}
	b, err := f.read(end, 1)
	if err != nil {
		return false, false, err
	}
	return b[0] == endOfRecord, false, nil
}

// resyncChunk is how much findValidAfter reads at a time.
const resyncChunk = 1 << 20

// findValidAfter looks at every offset from `from` on for valid records
// whose zxids rise above prev, following each run of them to its end.
func (f *fileImage) findValidAfter(from, prev int64) (validAfter, error) {
	var a validAfter
	for pos := from; pos+12 <= f.size; {
		chunk, err := f.read(pos, min(resyncChunk+11, f.size-pos))
		if err != nil {
			return a, err
		}
		next := pos + int64(len(chunk)) - 11
		for i := 0; i+12 <= len(chunk); i++ {
			// A record's length is nonzero: skip zeros fast.
			if chunk[i+11] == 0 && chunk[i+10] == 0 && chunk[i+9] == 0 && chunk[i+8] == 0 {
				continue
			}
			if binary.BigEndian.Uint32(chunk[i:]) != 0 {
				continue // the checksum field's high half
			}
			p := pos + int64(i)
			n := int64(int32(binary.BigEndian.Uint32(chunk[i+8:])))
			if n <= 0 || n > maxEntryLen || p+12+n+1 > f.size {
				continue
			}
			s := &logScanner{r: f.r, size: f.size, name: f.name, off: p, prevZxid: prev}
			ok, err := s.Next()
			if err != nil {
				return a, err
			}
			if !ok {
				continue
			}
			if a.count == 0 {
				a.first = s.Zxid
			}
			for ok {
				a.count++
				a.last, a.end = s.Zxid, s.Offset()
				if ok, err = s.Next(); err != nil {
					return a, err
				}
			}
			if s.Stop != stopBad {
				return a, nil
			}
			prev, next = a.last, s.Offset()+1
			break
		}
		pos = next
	}
	return a, nil
}
