// ValidPrincipal prints, for each line of standard input, "true" when
// javax.security.auth.x500.X500Principal accepts it as a name and "false"
// otherwise: ZooKeeper's X509AuthenticationProvider.isValid, which decides
// whether an ACL may name an x509 id. Lines are escaped: a backslash, u and
// four hex digits stand for that UTF-16 unit, so that any character survives
// the pipe.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import javax.security.auth.x500.X500Principal;

public class ValidPrincipal {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        for (String line; (line = in.readLine()) != null; ) {
            StringBuilder name = new StringBuilder();
            for (int i = 0; i < line.length(); i++) {
                if (line.startsWith("\\" + "u", i)) {
                    name.append((char) Integer.parseInt(line.substring(i + 2, i + 6), 16));
                    i += 5;
                } else {
                    name.append(line.charAt(i));
                }
            }
            boolean valid;
            try {
                new X500Principal(name.toString());
                valid = true;
            } catch (IllegalArgumentException e) {
                valid = false;
            }
            System.out.println(valid);
        }
    }
}
