// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title CreditToken
/// @notice Compute Credit (CCR), 18 decimals: the test token the Treasury holds on the embedded chain only. On a
/// configured network the Treasury holds whatever ERC-20 it was initialized with, and this contract is not deployed.
/// @dev Not upgradeable: it is test money on a local chain, recreated with the chain. Minting is the faucet's job.
contract CreditToken is ERC20, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");

    constructor(address admin, address minter) ERC20("Compute Credit", "CCR") {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(MINTER_ROLE, minter);
    }

    function mint(address to, uint256 amount) external onlyRole(MINTER_ROLE) {
        _mint(to, amount);
    }
}
