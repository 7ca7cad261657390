package wire

import (
	"bytes"
	"testing"
)

// The hot path of a server: one Decoder and one set of records reused per
// connection, one Encoder reused for replies. Figures go to
// docs/benchmarks.md (## wire).

var (
	benchPath  = "/golden/gozk/some-node"
	benchData  = bytes.Repeat([]byte{'d'}, 100)
	benchStat  = Stat{Czxid: 3, Mzxid: 7, Ctime: 1795260018408, Mtime: 1795260018432, Version: 1, Cversion: 3, DataLength: 100, NumChildren: 3, Pzxid: 6}
	getDataReq = AppendFrame(nil, &RequestHeader{Xid: 8, Type: OpGetData}, &PathWatchRequest{Path: benchPath, Watch: true})[FrameHeaderSize:]
	getDataRsp = AppendFrame(nil, &ReplyHeader{Xid: 8, Zxid: 7}, &GetDataResponse{Data: benchData, Stat: benchStat})[FrameHeaderSize:]
	setDataReq = AppendFrame(nil, &RequestHeader{Xid: 9, Type: OpSetData}, &SetDataRequest{Path: benchPath, Data: benchData, Version: 1})[FrameHeaderSize:]
)

func benchDecode(b *testing.B, in []byte, alias bool, header, body Record) {
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	var d Decoder
	for b.Loop() {
		d.Reset(in)
		d.Alias = alias
		header.Decode(&d)
		body.Decode(&d)
		if d.Err() != nil {
			b.Fatal(d.Err())
		}
	}
}

func benchEncode(b *testing.B, header, body Record) {
	b.ReportAllocs()
	e := NewEncoder(make([]byte, 0, 512))
	for b.Loop() {
		e.Reset()
		start := e.BeginFrame()
		header.Encode(e)
		body.Encode(e)
		e.EndFrame(start)
	}
	b.SetBytes(int64(e.Len()))
}

func BenchmarkDecodeGetDataRequest(b *testing.B) {
	benchDecode(b, getDataReq, false, &RequestHeader{}, &PathWatchRequest{})
}

func BenchmarkDecodeGetDataResponse(b *testing.B) {
	benchDecode(b, getDataRsp, false, &ReplyHeader{}, &GetDataResponse{})
}

func BenchmarkDecodeGetDataResponseAlias(b *testing.B) {
	benchDecode(b, getDataRsp, true, &ReplyHeader{}, &GetDataResponse{})
}

func BenchmarkDecodeSetDataRequest(b *testing.B) {
	benchDecode(b, setDataReq, false, &RequestHeader{}, &SetDataRequest{})
}

func BenchmarkDecodeSetDataRequestAlias(b *testing.B) {
	benchDecode(b, setDataReq, true, &RequestHeader{}, &SetDataRequest{})
}

func BenchmarkEncodeGetDataRequest(b *testing.B) {
	benchEncode(b, &RequestHeader{Xid: 8, Type: OpGetData}, &PathWatchRequest{Path: benchPath, Watch: true})
}

func BenchmarkEncodeGetDataResponse(b *testing.B) {
	benchEncode(b, &ReplyHeader{Xid: 8, Zxid: 7}, &GetDataResponse{Data: benchData, Stat: benchStat})
}

func BenchmarkEncodeSetDataRequest(b *testing.B) {
	benchEncode(b, &RequestHeader{Xid: 9, Type: OpSetData}, &SetDataRequest{Path: benchPath, Data: benchData, Version: 1})
}

// BenchmarkDecodeRequestByOpcode goes through DecodeRequest, which allocates
// the body record: the price of not writing a switch.
func BenchmarkDecodeRequestByOpcode(b *testing.B) {
	b.ReportAllocs()
	var h RequestHeader
	for b.Loop() {
		if err := Unmarshal(setDataReq[:8], &h); err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeRequest(h.Type, setDataReq[8:]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFrame(b *testing.B) {
	b.ReportAllocs()
	frame := AppendFrame(nil, rawRecord(setDataReq))
	r := bytes.NewReader(frame)
	fr := NewFrameReader(r, 0)
	for b.Loop() {
		r.Reset(frame)
		if _, err := fr.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
}
