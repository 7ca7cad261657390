// Reads one hex-encoded byte string per line and prints, per line, the hex of
// the String that new String(bytes, UTF_8) makes of it, re-encoded as
// standard UTF-8 (a surrogate pair as its four-byte sequence). This is how
// ZooKeeper's BinaryInputArchive.readString reads a ustring; wire's
// TestJavaStringDecodingMatchesJDK compares decodeJavaString with it.
// Run with: java DecodeStrings.java < input
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

public class DecodeStrings {
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII)));
        for (String line; (line = in.readLine()) != null; ) {
            String s = new String(hex.parseHex(line), StandardCharsets.UTF_8);
            out.println(hex.formatHex(s.getBytes(StandardCharsets.UTF_8)));
        }
        out.flush();
    }
}
