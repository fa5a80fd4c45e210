/// The times fixtures print of their own calls, timed by their uninstrumented `main`: one line
/// per call, its name, then milliseconds, then anything (`walk 12.345 678`, `many_tiny 12.345`).
/// name -> ms (the last line wins for a repeated name).
func fixtureTimes(_ stdout: String) -> [String: Double] {
    var times: [String: Double] = [:]
    for line in stdout.split(separator: "\n") {
        let parts = line.split(separator: " ")
        if parts.count >= 2, let ms = Double(parts[1]) { times[String(parts[0])] = ms }
    }
    return times
}
