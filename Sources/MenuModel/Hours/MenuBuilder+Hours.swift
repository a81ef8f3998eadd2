import TimeZoneRules

/// Reads a node's `hours` and `exceptions` and the document's `timeZone`, reporting each problem
/// at its JSON path (`items[0].hours[1].from`) with the node's id.
extension MenuBuilder {
    mutating func setHours(_ value: JSONValue, of position: Int32) {
        guard case .array(let elements) = value else {
            report(.init(key: "hours", kind: .wrongType(expected: "an array of ranges"), value: value.excerpt()))
            return
        }
        var weekly: [WeeklyRange] = []
        for (index, element) in elements.enumerated() {
            let path = "hours[\(index)]"
            guard let fields = scheduleObject(element, at: path, allowed: ["days", "from", "to"]) else { continue }
            var days = Weekdays.all
            if let given = fields["days"] { days = weekdays(given, at: path + ".days") ?? [] }
            guard let range = timeRange(fields, at: path) else { continue }
            weekly.append(WeeklyRange(days: days, range: range))
        }
        openingHours[position, default: OpeningHours(weekly: nil)].weekly = weekly
        if firstScheduledNode == nil { firstScheduledNode = (position, "hours") }
    }

    mutating func setExceptions(_ value: JSONValue, of position: Int32) {
        guard case .array(let elements) = value else {
            report(.init(key: "exceptions", kind: .wrongType(expected: "an array of dates"), value: value.excerpt()))
            return
        }
        var exceptions: [LocalDate: [TimeRange]] = [:]
        var datePaths: [LocalDate: String] = [:]
        for (index, element) in elements.enumerated() {
            let path = "exceptions[\(index)]"
            guard let fields = scheduleObject(element, at: path, allowed: ["date", "closed", "hours"]) else { continue }
            guard case .string(let text) = fields["date"] else {
                report(
                    .init(
                        key: fields["date"] == nil ? path : path + ".date",
                        kind: fields["date"] == nil ? .missingKey : .invalidDate,
                        value: fields["date"]?.excerpt() ?? "\"date\""))
                continue
            }
            guard let date = LocalDate(text) else {
                report(.init(key: path + ".date", kind: .invalidDate, value: quoted(text)))
                continue
            }
            if let first = datePaths[date] {
                report(
                    .init(
                        key: path + ".date", kind: .repeatedExceptionDate(firstPath: nodePath + "." + first),
                        value: quoted(text)))
                continue
            }
            datePaths[date] = path + ".date"
            switch (fields["closed"], fields["hours"]) {
            case (.bool(true), nil):
                exceptions[date] = []
            case (nil, .array(let list)):
                var ranges: [(range: TimeRange, path: String)] = []
                for (rangeIndex, item) in list.enumerated() {
                    let rangePath = path + ".hours[\(rangeIndex)]"
                    guard let rangeFields = scheduleObject(item, at: rangePath, allowed: ["from", "to"]),
                        let range = timeRange(rangeFields, at: rangePath)
                    else { continue }
                    if let other = ranges.first(where: { Self.overlap($0.range, range) }) {
                        report(
                            .init(
                                key: rangePath, kind: .overlappingRanges(firstPath: nodePath + "." + other.path),
                                value: item.excerpt()))
                        continue
                    }
                    ranges.append((range, rangePath))
                }
                exceptions[date] = ranges.map(\.range)
            default:
                report(.init(key: path, kind: .exceptionWithoutHours, value: element.excerpt()))
            }
        }
        openingHours[position, default: OpeningHours(weekly: nil)].exceptions = exceptions
        if firstScheduledNode == nil { firstScheduledNode = (position, "exceptions") }
    }

    /// Loads the document's `timeZone` from the machine's database once the whole document is
    /// read; hours without one are refused at the first node that has them.
    mutating func resolveTimeZone() {
        if let name = timeZoneName {
            do throws(ZoneRulesError) {
                timeZone = try ZoneRules.load(named: name)
            } catch {
                report(node: 0, key: "timeZone", kind: .unknownTimeZone(reason: error.description), value: quoted(name))
            }
        } else if let (node, key) = firstScheduledNode {
            report(node: Int(node), key: key, kind: .hoursWithoutTimeZone, value: "\"\(key)\"")
        }
    }

    /// The path of the node being read (`items[0].items[2]`).
    private var nodePath: String { currentPath }

    /// `element` as an object whose keys are all in `allowed`; nil (reported) otherwise.
    private mutating func scheduleObject(_ element: JSONValue, at path: String, allowed: [String])
        -> [String: JSONValue]?
    {
        guard case .object(let fields) = element else {
            report(.init(key: path, kind: .wrongType(expected: "an object"), value: element.excerpt()))
            return nil
        }
        var valid = true
        for key in fields.keys.sorted() where !allowed.contains(key) {
            report(
                .init(
                    key: path + "." + key, kind: .unknownScheduleKey(allowed: allowed.joined(separator: ", ")),
                    value: quoted(key)))
            valid = false
        }
        return valid ? fields : nil
    }

    private mutating func weekdays(_ value: JSONValue, at path: String) -> Weekdays? {
        guard case .array(let names) = value, !names.isEmpty else {
            report(
                .init(key: path, kind: .wrongType(expected: "a non-empty array of days"), value: value.excerpt()))
            return nil
        }
        var days: Weekdays = []
        for (index, name) in names.enumerated() {
            guard case .string(let text) = name, let day = Weekdays.names.firstIndex(of: text) else {
                report(.init(key: path + "[\(index)]", kind: .invalidDay, value: name.excerpt()))
                return nil
            }
            days.insert(Weekdays(day: day))
        }
        return days
    }

    private mutating func timeRange(_ fields: [String: JSONValue], at path: String) -> TimeRange? {
        var minutes: [Int] = []
        for key in ["from", "to"] {
            guard let value = fields[key] else {
                report(.init(key: path, kind: .missingKey, value: "\"\(key)\""))
                return nil
            }
            guard case .string(let text) = value, let minute = TimeRange.minutes(of: text, end: key == "to") else {
                report(.init(key: path + "." + key, kind: .invalidTimeOfDay, value: value.excerpt()))
                return nil
            }
            minutes.append(minute)
        }
        guard minutes[0] != minutes[1] else {
            report(.init(key: path, kind: .emptyTimeRange, value: fields["from"]?.excerpt() ?? ""))
            return nil
        }
        return TimeRange(from: minutes[0], to: minutes[1])
    }

    /// Whether two ranges of one day share a minute (a range through midnight runs past 24:00).
    private static func overlap(_ a: TimeRange, _ b: TimeRange) -> Bool {
        let aEnd = a.crossesMidnight ? a.to + 1440 : a.to
        let bEnd = b.crossesMidnight ? b.to + 1440 : b.to
        return a.from < bEnd && b.from < aEnd
    }
}
