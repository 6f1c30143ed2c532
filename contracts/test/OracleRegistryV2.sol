// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {OracleRegistry} from "../OracleRegistry.sol";

/// @dev Test-only upgrade target: same storage, a new version string and one new function.
contract OracleRegistryV2 is OracleRegistry {
    function version() external pure override returns (string memory) {
        return "2.0.0";
    }

    function upgradedMarker() external pure returns (bool) {
        return true;
    }
}
