// Murmur2Oracle prints what Kafka's Java producer computes for record keys,
// with Kafka's own classes: for each input line "hex-key TAB partitions" it
// prints "Utils.murmur2(key) TAB BuiltInPartitioner.partitionForKey(key,
// partitions)", the partition the default partitioner gives a keyed record.
// testbed.Murmur2Oracle runs it: java -cp 'kafka/libs/*' Murmur2Oracle.java < cases.tsv
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;

public class Murmur2Oracle {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            byte[] key = HexFormat.of().parseHex(f[0]);
            int partitions = Integer.parseInt(f[1]);
            out.println(Utils.murmur2(key) + "\t" + BuiltInPartitioner.partitionForKey(key, partitions));
        }
        out.flush();
    }
}
