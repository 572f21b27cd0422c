// JodaOracle prints object paths the way Confluent's TimeBasedPartitioner does,
// with Joda-Time itself: for each input line "pattern TAB zone TAB locale TAB
// timestamp-ms TAB partition.duration.ms" it prints "bucket-start-ms TAB path".
// testbed.JodaOracle runs it: java -cp joda-time.jar JodaOracle.java < cases.tsv
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.joda.time.DateTime;
import org.joda.time.DateTimeZone;
import org.joda.time.format.DateTimeFormat;
import org.joda.time.format.DateTimeFormatter;

public class JodaOracle {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            DateTimeZone zone = DateTimeZone.forID(f[1]);
            DateTimeFormatter format = DateTimeFormat.forPattern(f[0]).withZone(zone).withLocale(new Locale(f[2]));
            long timestamp = Long.parseLong(f[3]);
            long duration = Long.parseLong(f[4]);
            // TimeBasedPartitioner.getPartition
            long local = zone.convertUTCToLocal(timestamp);
            long bucket = (local / duration) * duration;
            long start = zone.convertLocalToUTC(bucket, false);
            out.println(start + "\t" + new DateTime(start).toString(format));
        }
        out.flush();
    }
}
