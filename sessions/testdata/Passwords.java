// Prints ZooKeeper's session password for each session id given in decimal
// on the command line, one "id hex" line each: the password is
// java.util.Random(id ^ 0xB3415C00L).nextBytes(new byte[16]), as in
// ZooKeeperServer.generatePasswd.
public class Passwords {
    public static void main(String[] args) {
        for (String a : args) {
            long id = Long.parseLong(a);
            java.util.Random r = new java.util.Random(id ^ 0xB3415C00L);
            byte[] p = new byte[16];
            r.nextBytes(p);
            StringBuilder sb = new StringBuilder();
            for (byte b : p) sb.append(String.format("%02x", b & 0xff));
            System.out.println(a + " " + sb);
        }
    }
}
