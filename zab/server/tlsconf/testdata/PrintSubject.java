// PrintSubject prints, for each DER certificate file named on the command
// line, its subject as X500Principal.getName() gives it: the id ZooKeeper's
// X509AuthenticationProvider derives. Characters outside printable ASCII are
// written as a backslash, u and four hex digits so the output does not depend on the platform encoding.
// Run with the JDK's source launcher: java PrintSubject.java a.der b.der
import java.io.FileInputStream;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;

public class PrintSubject {
    public static void main(String[] args) throws Exception {
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        for (String path : args) {
            try (FileInputStream in = new FileInputStream(path)) {
                X509Certificate cert = (X509Certificate) factory.generateCertificate(in);
                String name = cert.getSubjectX500Principal().getName();
                StringBuilder out = new StringBuilder();
                for (char c : name.toCharArray()) {
                    if (c >= 0x20 && c < 0x7f) {
                        out.append(c);
                    } else {
                        out.append(String.format("\\u%04x", (int) c));
                    }
                }
                System.out.println(out);
            }
        }
    }
}
