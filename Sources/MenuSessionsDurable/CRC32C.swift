/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI, ext4 and
/// LevelDB; table-driven, one byte per step. `CRC32C.checksum("123456789") == 0xE3069283`.
enum CRC32C {
    static let table: [UInt32] = (0 ..< 256).map { byte in
        var crc = UInt32(byte)
        for _ in 0 ..< 8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    /// Continues a running checksum (start from 0) over `bytes`.
    static func update(_ crc: UInt32, _ bytes: some Sequence<UInt8>) -> UInt32 {
        var value = ~crc
        table.withUnsafeBufferPointer { table in
            for byte in bytes { value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8) }
        }
        return ~value
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 { update(0, bytes) }
}
