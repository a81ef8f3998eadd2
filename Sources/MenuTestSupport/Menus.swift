import Foundation
import MenuModel

/// The tests' own menu (`LivePaths.menuConfig`, a fixture; not the shipped `Config/menu.json`).
package func sichuanMenu() throws -> Menu {
    try Menu(contentsOfFile: LivePaths.menuConfig)
}
