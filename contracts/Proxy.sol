// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

// The ERC-1967 proxy the registry is deployed behind, compiled with it so the artifact holds both.
import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";
