import Foundation
import MenuClient

/// Draws one row of the table as a screen line, as the seed's app shows its menu: groups flush
/// left with a disclosure mark (▾ open, ▸ closed) and their child count, rows indented under
/// them (two columns a level) with ✓ before a chosen one (a group: ✓ when every leaf under it is,
/// "2/5 ✓" when some are), the English name dimmed after the title, and at the right edge
/// three aligned columns from the row's attributes: marks (辣 per level of `spicy`, 素 for
/// `vegetarian`), `volumeMl`, and the price with its `currency` ("¥38", "¥12.5").
///
/// Invariant: every line it makes is exactly ``width`` columns (``DisplayWidth``), titles
/// sanitized (``Span``) and truncated with "…", so the columns stay aligned with CJK titles. Cost: O(width).
public struct RowFormatter: Sendable {
    public var width: Int
    /// Digits of the row-number gutter: enough for the table's last row.
    public var numberWidth: Int

    static let marksWidth = 6
    static let volumeWidth = 6
    static let priceWidth = 8

    public init(width: Int, rowCount: Int) {
        self.width = max(1, width)
        numberWidth = String(max(1, rowCount)).count
    }

    /// The line of the row at `index` (nil: not fetched yet, a placeholder), highlighted when it has the cursor.
    public func line(for row: MenuRow?, at index: Int, isCursor: Bool) -> ScreenLine {
        let plain: TextStyle = isCursor ? .reversed : .plain
        let faint: TextStyle = isCursor ? .reversed : .dim
        let number = Self.leftPadded(String(index + 1), to: numberWidth) + " "
        guard let row else {
            return Self.assemble([Span(number, faint), Span("…", faint)], right: [], width: width, filler: plain)
        }
        let indent = String(repeating: "  ", count: max(0, row.depth))
        var left = [Span(number, faint)]
        // Sold out or paused: the title dimmed, then what and until when.
        let unavailable = row.availability != nil
        if row.isGroup {
            left.append(Span(indent + (row.isExpanded == true ? "▾ " : "▸ "), plain))
            left.append(Span(row.title, isCursor ? .reversedBold : unavailable ? .dim : .bold))
            if let children = row.childCount { left.append(Span(" (\(children))", faint)) }
            switch row.selection {
            case .all?: left.append(Span(" ✓", plain))
            case .some?: left.append(Span(" \(row.selectedCount ?? 0)/\(row.selectableCount ?? 0) ✓", faint))
            case .none?, nil: break
            }
        } else {
            left.append(Span(indent + (row.selected == true ? "✓ " : "  "), plain))
            left.append(Span(row.title, unavailable ? faint : plain))
        }
        if let availability = row.availability {
            left.append(Span("  " + Self.availabilityText(availability), isCursor ? .reversed : .error))
        }
        // The English name beside the title, unless the title is in English already (`--lang en`).
        if let english = row.attributes?["en"]?.stringValue, english != row.title {
            left.append(Span("  " + english, faint))
        }
        var right: [Span] = []
        if !row.isGroup, width >= 40 {
            let columns =
                Self.leftPadded(Self.marks(row.attributes), to: Self.marksWidth) + " "
                + Self.leftPadded(Self.volume(row.attributes) ?? "", to: Self.volumeWidth) + " "
                + Self.leftPadded(Self.price(row.attributes) ?? "", to: Self.priceWidth)
            right = [Span(" " + columns, plain)]
        } else if !row.isGroup, let price = Self.price(row.attributes) {
            right = [Span(" " + price, plain)]
        }
        return Self.assemble(left, right: right, width: width, filler: plain)
    }

    /// "sold out · back 19:30 · the wok is busy", "closed · opens Tue 07:00": the state, the end
    /// in local time, the reason.
    public static func availabilityText(_ availability: MenuRowAvailability) -> String {
        let names: [MenuAvailabilityState: String] = [.soldOut: "sold out", .paused: "paused", .closed: "closed"]
        var parts = [names[availability.state] ?? availability.state.rawValue]
        if let until = availability.untilDate {
            let formatter = DateFormatter()
            formatter.dateFormat = Calendar.current.isDateInToday(until) ? "HH:mm" : "EEE HH:mm"
            parts.append((availability.state == .closed ? "opens " : "back ") + formatter.string(from: until))
        }
        if let reason = availability.reason { parts.append(reason) }
        return parts.joined(separator: " · ")
    }

    /// `left` then `right` flush with the right edge, `left` cut to what is left of `width`.
    static func assemble(_ left: [Span], right: [Span], width: Int, filler: TextStyle) -> ScreenLine {
        var right = right
        var rightWidth = right.reduce(0) { $0 + DisplayWidth.of($1.text.string) }
        if rightWidth > width { (right, rightWidth) = ([], 0) }  // no room for it at all: left only
        var room = width - rightWidth
        var spans: [Span] = []
        for span in left where room > 0 {
            let cut = DisplayWidth.truncated(span.text.string, to: room)
            room -= DisplayWidth.of(cut)
            spans.append(Span(cut, span.style))
        }
        if room > 0 { spans.append(Span(String(repeating: " ", count: room), filler)) }
        return ScreenLine(spans + right)
    }

    /// The price with its currency: "¥38", "$4.25", "12 CHF"; nil without a numeric `price`.
    public static func price(_ attributes: [String: MenuJSONValue]?) -> String? {
        guard let amount = attributes?["price"]?.numberValue, amount.isFinite else { return nil }
        let text = amountText(amount)
        switch attributes?["currency"]?.stringValue {
        case nil: return text
        case "CNY", "JPY": return "¥" + text
        case "USD": return "$" + text
        case "EUR": return "€" + text
        case "GBP": return "£" + text
        case let code?: return text + " " + TerminalText(code).string
        }
    }

    /// `amount` with at most two decimals and no trailing zeros: 38, 12.5, 39.95.
    static func amountText(_ amount: Double) -> String {
        let cents = (abs(amount) * 100).rounded()
        guard cents < 1e17 else { return String(amount) }
        let whole = Int(cents) / 100
        let fraction = Int(cents) % 100
        var text = (amount < 0 && cents > 0 ? "-" : "") + String(whole)
        if fraction != 0 {
            text += "." + (fraction % 10 == 0 ? String(fraction / 10) : leftPadded(String(fraction), to: 2, with: "0"))
        }
        return text
    }

    /// 辣 for each level of `spicy` (a number 0 to 3, or `true` for one), 素 when `vegetarian`.
    static func marks(_ attributes: [String: MenuJSONValue]?) -> String {
        var levels = 0
        if let spicy = attributes?["spicy"] {
            levels = spicy.boolValue == true ? 1 : Int(min(3, max(0, spicy.numberValue ?? 0)))
        }
        return String(repeating: "辣", count: levels) + (attributes?["vegetarian"]?.boolValue == true ? "素" : "")
    }

    static func volume(_ attributes: [String: MenuJSONValue]?) -> String? {
        guard let millilitres = attributes?["volumeMl"]?.numberValue, millilitres.isFinite, millilitres > 0 else {
            return nil
        }
        return amountText(millilitres) + "ml"
    }

    static func leftPadded(_ text: String, to width: Int, with pad: Character = " ") -> String {
        String(repeating: pad, count: max(0, width - DisplayWidth.of(text))) + text
    }
}
