import Foundation

/// The fan-out figures as an SVG line chart: latency against subscribers, both axes log-scale (the
/// latencies span decades), the median (solid) and p99 (dashed) of cordond and dbus-daemon.
/// Plain string building.
enum FanoutChart {
    private static let width = 760.0
    private static let height = 440.0
    private static let left = 80.0
    private static let right = 190.0
    private static let top = 50.0
    private static let bottom = 60.0

    /// One line: its label, colour, dash pattern and points (subscribers, µs).
    private struct Series {
        let label: String
        let color: String
        let dashed: Bool
        let points: [(Double, Double)]
    }

    static func svg(_ report: FanoutReport) -> String {
        let rows = report.rows.sorted { $0.subscribers < $1.subscribers }
        let series = [
            Series(
                label: "cordond median", color: "#1f6feb", dashed: false,
                points: rows.map { (Double($0.subscribers), $0.cordond.medianMicroseconds) }),
            Series(
                label: "cordond p99", color: "#1f6feb", dashed: true,
                points: rows.map { (Double($0.subscribers), $0.cordond.p99Microseconds) }),
            Series(
                label: "dbus-daemon median", color: "#d1242f", dashed: false,
                points: rows.map { (Double($0.subscribers), $0.dbusDaemon.medianMicroseconds) }),
            Series(
                label: "dbus-daemon p99", color: "#d1242f", dashed: true,
                points: rows.map { (Double($0.subscribers), $0.dbusDaemon.p99Microseconds) }),
        ]
        let xs = rows.map { Double(max(1, $0.subscribers)) }
        let minX = log10(xs.min() ?? 1)
        let maxX = max(log10(xs.max() ?? 10), minX + 1)
        let values = series.flatMap { $0.points.map { max(0.1, $0.1) } }
        let minY = log10(values.min() ?? 1).rounded(.down)
        let maxY = max(log10(values.max() ?? 10).rounded(.up), minY + 1)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let x = { (value: Double) in left + (log10(max(1, value)) - minX) / (maxX - minX) * plotWidth }
        let y = { (value: Double) in top + plotHeight - (log10(max(0.1, value)) - minY) / (maxY - minY) * plotHeight }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(width / 2))" y="24" text-anchor="middle" font-size="15">\
            One event fanned out to N subscribers (\(report.repeats) runs of \(report.runs) rounds per N)</text>

            """
        // Axes, grid and ticks.
        let axisY = f(top + plotHeight)
        svg +=
            "<line x1=\"\(f(left))\" y1=\"\(axisY)\" x2=\"\(f(left + plotWidth))\" y2=\"\(axisY)\" stroke=\"black\"/>\n"
        svg += "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(axisY)\" stroke=\"black\"/>\n"
        for decade in Int(minY)...Int(maxY) {
            for factor in [1.0, 2, 5] where Double(decade) + log10(factor) <= maxY + 1e-9 {
                let value = factor * pow(10, Double(decade))
                let position = f(y(value))
                let stroke = factor == 1 ? "#ccc" : "#eee"
                svg += "<line x1=\"\(f(left))\" y1=\"\(position)\" x2=\"\(f(left + plotWidth))\" y2=\"\(position)\" "
                svg += "stroke=\"\(stroke)\"/>\n"
                svg += "<text x=\"\(f(left - 8))\" y=\"\(position)\" text-anchor=\"end\" dominant-baseline=\"middle\">"
                svg += "\(label(value))</text>\n"
            }
        }
        var decade = minX.rounded(.down)
        while decade <= maxX + 1e-9 {
            let value = pow(10, decade)
            if decade >= minX - 1e-9 {
                let position = f(x(value))
                svg +=
                    "<line x1=\"\(position)\" y1=\"\(f(top))\" x2=\"\(position)\" y2=\"\(axisY)\" stroke=\"#ddd\"/>\n"
                svg += "<text x=\"\(position)\" y=\"\(f(top + plotHeight + 18))\" text-anchor=\"middle\">"
                svg += "\(Int(value))</text>\n"
            }
            decade += 1
        }
        svg += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 16))\" text-anchor=\"middle\">"
        svg += "subscribers (log scale)</text>\n"
        svg += "<text transform=\"translate(20 \(f(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">"
        svg += "time to the last receiver (µs, log scale)</text>\n"
        // Lines, points and the legend.
        for (index, line) in series.enumerated() {
            let path = line.points.map { "\(f(x($0.0))),\(f(y($0.1)))" }.joined(separator: " ")
            let dash = line.dashed ? " stroke-dasharray=\"6 4\"" : ""
            svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\"\(dash)/>\n"
            for point in line.points {
                svg += "<circle cx=\"\(f(x(point.0)))\" cy=\"\(f(y(point.1)))\" r=\"3\" fill=\"\(line.color)\"/>\n"
            }
            let legendY = f(top + 10 + Double(index) * 20)
            let legendX = left + plotWidth + 15
            svg += "<line x1=\"\(f(legendX))\" y1=\"\(legendY)\" x2=\"\(f(legendX + 24))\" y2=\"\(legendY)\" "
            svg += "stroke=\"\(line.color)\" stroke-width=\"2\"\(dash)/>\n"
            svg += "<text x=\"\(f(legendX + 30))\" y=\"\(legendY)\" dominant-baseline=\"middle\">\(line.label)</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// One decimal place, for coordinates.
    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    /// A tick label: no decimals from 10 up.
    private static func label(_ value: Double) -> String {
        value >= 10 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }
}
